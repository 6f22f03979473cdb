// topk over a vocabulary-sized logits row (sampling's hot spot).
#include <benchmark/benchmark.h>

#include <random>

#include "ingot/ops/functional.h"

namespace {

void BM_TopkVocabRow(benchmark::State& state) {
  const int64_t vocab = state.range(0), k = state.range(1);
  ingot::Tensor logits = ingot::Tensor::empty({1, vocab}, ingot::DType::F32);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-10, 10);
  float* p = logits.data<float>();
  for (int64_t i = 0; i < vocab; ++i) p[i] = dist(rng);
  for (auto _ : state) benchmark::DoNotOptimize(ingot::topk(logits, k));
  state.counters["elements/s"] =
      benchmark::Counter(double(vocab), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TopkVocabRow)->Args({151936, 50})->Args({151936, 1})->Unit(benchmark::kMicrosecond);

}  // namespace
