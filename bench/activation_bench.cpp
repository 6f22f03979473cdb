// The gated MLP's fused activation, silu(gate) * up, through cpu::silu_mul on
// preallocated contiguous operands (as the runtime calls it): Qwen3-0.6B's decode row
// (3072 elements) and a prefill-sized one. Counter: elements/s.
#include <benchmark/benchmark.h>

#include <random>

#include "ingot/ops/cpu/activation.h"
#include "ingot/ops/functional.h"

namespace {

using ingot::DType;
using ingot::Tensor;

Tensor random_tensor(int64_t n, DType t, uint32_t seed) {
  Tensor f = Tensor::empty({n}, DType::F32);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-6.0f, 6.0f);
  float* p = f.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = dist(rng);
  return ingot::to(f, t);
}

void run_silu_mul(benchmark::State& state, DType t) {
  const int64_t n = state.range(0);
  const Tensor g = random_tensor(n, t, 1), u = random_tensor(n, t, 2);
  const Tensor out = Tensor::empty({n}, t);
  for (auto _ : state) {
    ingot::cpu::silu_mul(out, g, u);
    benchmark::DoNotOptimize(out.raw_data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_SiluMulF32(benchmark::State& state) {
  run_silu_mul(state, DType::F32);
}
void BM_SiluMulBF16(benchmark::State& state) {
  run_silu_mul(state, DType::BF16);
}

BENCHMARK(BM_SiluMulF32)->Arg(3072)->Arg(3072 * 64)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SiluMulBF16)->Arg(3072)->Arg(3072 * 64)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
