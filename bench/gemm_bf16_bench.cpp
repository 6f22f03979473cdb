// Prefill GEMMs of a bf16 model in the `linear` layout: y[M, N] = x[M, K] · W[N, K]^T
// with x, W and y all bf16 (the Qwen3-0.6B projections at 16 and 128 prompt tokens).
// On a CPU with AVX512_BF16 they take the vdpbf16ps tile kernel (gemm_bf16_avx512.cpp).
//
// Counters: GFLOP/s = 2·M·N·K / time (time as Google Benchmark reports it: CPU time of
// the calling thread unless --benchmark_... real time is asked for; with
// INGOT_NUM_THREADS=1 the two agree and the figure is one core's).
// Run: ingot_bench --benchmark_filter=GemmBf16Prefill
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_common.h"
#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/gemm.h"

namespace ingot::bench {
namespace {

void BM_GemmBf16Prefill(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const void* x = random_matrix(m, k, DType::BF16);
  const void* w = random_matrix(n, k, DType::BF16);
  std::vector<uint16_t> y(size_t(m * n));
  cpu::GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = {x, DType::BF16, k, 1};
  g.b = {w, DType::BF16, 1, k};  // B[k, n] = W[n, k]
  g.c = y.data(), g.c_dtype = DType::BF16, g.ldc = n;
  cpu::gemm(g);
  for (auto _ : state) cpu::gemm(g);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * double(m) * double(n) * double(k) * double(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
  state.counters["threads"] = num_threads();
}

// M, K, N: q / gate-up ([1024 -> 2048 / 3072]) and o / down ([2048 / 3072 -> 1024]).
BENCHMARK(BM_GemmBf16Prefill)
    ->Args({16, 1024, 3072})
    ->Args({16, 3072, 1024})
    ->Args({128, 1024, 3072})
    ->Args({128, 3072, 1024})
    ->Args({128, 1024, 1024})
    ->Args({512, 1024, 3072})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

}  // namespace
}  // namespace ingot::bench
