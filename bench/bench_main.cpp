// Entry point of ingot_bench (every bench/*.cpp registers its benchmarks statically).
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
