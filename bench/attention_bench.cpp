// Fused attention throughput: decode (1 query vs a 4096-entry KV cache, 32 query heads
// over 8 kv heads, head_dim 128; f32 and bf16 cache), Qwen3-0.6B's decode step (16 query
// heads over 8 kv heads, head_dim 128, cache lengths 64..1024) and causal prefill (512
// queries).
// Counters: GB/s = K+V bytes read / time (the decode roofline), GFLOP/s = 4*Lq*S*E*Hq
// (2 for QK^T, 2 for PV; halved for causal) / time.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>

#include "bench_common.h"
#include "ingot/ops/cpu/attention.h"
#include "ingot/ops/functional.h"

namespace {

using ingot::DType;
using ingot::Tensor;

Tensor random_tensor(const ingot::IntShape& shape, DType t, uint32_t seed) {
  Tensor f = Tensor::empty(shape, DType::F32);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = f.data<float>();
  for (int64_t i = 0; i < f.numel(); ++i) p[i] = dist(rng);
  return ingot::to(f, t);
}

// generic: force the portable kernels (the path CPUs without AVX2 / AVX-512 take; the
// baseline the ISA kernels are measured against).
void run_attention(benchmark::State& state, DType t, int64_t lq, int64_t s, bool causal,
                   int64_t kHq = 32, bool generic = false) {
  constexpr int64_t kHkv = 8, kE = 128;
  ingot::cpu::set_attention_isa(generic ? ingot::cpu::AttentionIsa::Generic
                                        : ingot::cpu::AttentionIsa::Auto);
  Tensor q = random_tensor({1, kHq, lq, kE}, t, 1);
  Tensor k = random_tensor({1, kHkv, s, kE}, t, 2);
  Tensor v = random_tensor({1, kHkv, s, kE}, t, 3);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Tensor out = ingot::scaled_dot_product_attention(q, k, v, std::nullopt, causal, std::nullopt,
                                                     /*enable_gqa=*/true);
    benchmark::DoNotOptimize(out.raw_data());
  }
  ingot::cpu::set_attention_isa(ingot::cpu::AttentionIsa::Auto);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
      double(state.iterations());
  const double kv_bytes = double(k.nbytes() + v.nbytes());
  // Decode is bound by reading K and V once: compare with the bandwidth probe run now.
  if (lq == 1 && s >= 4096) {
    state.counters["frac_of_peak"] =
        kv_bytes / seconds / 1e9 / ingot::bench::read_bandwidth_gbs(true);
  }
  double flops = 4.0 * double(lq) * double(s) * double(kE) * double(kHq);
  if (causal) flops /= 2;
  state.counters["GB/s"] =
      benchmark::Counter(kv_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AttentionDecodeF32(benchmark::State& state) {
  run_attention(state, DType::F32, 1, 4096, false);
}
void BM_AttentionDecodeBF16(benchmark::State& state) {
  run_attention(state, DType::BF16, 1, 4096, false);
}
// One Qwen3-0.6B decode step's attention over a cache of S = state.range(0) entries (the
// cache stays cache-resident here, as it does not in a 28-layer model); state.range(1)
// = 1 forces the generic kernels.
void BM_AttentionDecodeQwen3F32(benchmark::State& state) {
  run_attention(state, DType::F32, 1, state.range(0), false, 16, state.range(1) != 0);
}
void BM_AttentionDecodeQwen3BF16(benchmark::State& state) {
  run_attention(state, DType::BF16, 1, state.range(0), false, 16, state.range(1) != 0);
}
void BM_AttentionDecodeQwen3F16(benchmark::State& state) {
  run_attention(state, DType::F16, 1, state.range(0), false, 16, state.range(1) != 0);
}
// A static cache's decode step, as the exported programs run it: Qwen3-0.6B heads over a
// 1024-slot f32 cache of which the first state.range(0) are filled, a bool mask [1, 1024]
// hiding the rest (the kernel skips hidden key blocks).
void BM_AttentionDecodeStaticCacheF32(benchmark::State& state) {
  constexpr int64_t kHq = 16, kHkv = 8, kE = 128, kSlots = 1024;
  const int64_t visible = state.range(0);
  Tensor q = random_tensor({1, kHq, 1, kE}, DType::F32, 1);
  Tensor k = random_tensor({1, kHkv, kSlots, kE}, DType::F32, 2);
  Tensor v = random_tensor({1, kHkv, kSlots, kE}, DType::F32, 3);
  Tensor mask = Tensor::empty({1, kSlots}, DType::Bool);
  for (int64_t j = 0; j < kSlots; ++j) mask.data<bool>()[j] = j < visible;
  for (auto _ : state) {
    Tensor out = ingot::scaled_dot_product_attention(q, k, v, mask, false, std::nullopt,
                                                     /*enable_gqa=*/true);
    benchmark::DoNotOptimize(out.raw_data());
  }
}

void BM_AttentionPrefillCausalF32(benchmark::State& state) {
  run_attention(state, DType::F32, 512, 512, true, 32, state.range(0) != 0);
}
void BM_AttentionPrefillCausalBF16(benchmark::State& state) {
  run_attention(state, DType::BF16, 512, 512, true, 32, state.range(0) != 0);
}

BENCHMARK(BM_AttentionDecodeF32)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionDecodeBF16)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionDecodeQwen3F32)
    ->ArgsProduct({{64, 128, 256, 512, 1024}, {0, 1}})
    ->ArgNames({"S", "generic"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionDecodeQwen3BF16)
    ->ArgsProduct({{64, 128, 256, 512, 1024}, {0, 1}})
    ->ArgNames({"S", "generic"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionDecodeQwen3F16)
    ->ArgsProduct({{64, 128, 256, 512, 1024}, {0, 1}})
    ->ArgNames({"S", "generic"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionDecodeStaticCacheF32)
    ->ArgName("visible")
    ->Arg(32)
    ->Arg(256)
    ->Arg(1024)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionPrefillCausalF32)
    ->ArgName("generic")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttentionPrefillCausalBF16)
    ->ArgName("generic")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
