// GEMM / GEMV benchmarks in the `linear` layout, y[M, N] = x[M, K] · W[N, K]^T, with
// OpenBLAS in the same binary as the anchor.
//
// Counters: GFLOP/s = 2·M·N·K / time; GB/s = weight bytes / time. frac_of_peak: for GEMM,
// GFLOP/s over OpenBLAS cblas_sgemm at the same shape (measured in this run); for GEMV,
// GB/s over the streaming-read bandwidth of the probe (bandwidth_bench.cpp), measured
// again right after each GEMV loop.
// Run: ingot_bench --benchmark_format=json
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <map>
#include <tuple>
#include <vector>

#include "bench_common.h"
#include "ingot/core/tensor.h"
#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/gemm.h"

namespace ingot::bench {
namespace {

using cpu::GemmArgs;

void openblas_linear(int64_t m, int64_t k, int64_t n, const float* x, const float* w, float* y) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(m), int(n), int(k), 1.0f, x, int(k), w,
              int(k), 0.0f, y, int(n));
}

// OpenBLAS sgemm GFLOP/s at this shape: best of 3 after a warm-up, cached per shape, and
// raised to `seen` (a rate BM_GemmOpenBLAS measured) when higher: on a shared machine the
// best observed rate is the least disturbed one.
double openblas_gflops(int64_t m, int64_t k, int64_t n, double seen = 0.0) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, double> cache;
  auto it = cache.find({m, k, n});
  if (it != cache.end()) return it->second = std::max(it->second, seen);
  auto x = static_cast<const float*>(random_matrix(m, k, DType::F32));
  auto w = static_cast<const float*>(random_matrix(n, k, DType::F32));
  std::vector<float> y(size_t(m * n));
  openblas_linear(m, k, n, x, w, y.data());
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    openblas_linear(m, k, n, x, w, y.data());
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return cache[{m, k, n}] = std::max(seen, 2.0 * double(m) * double(n) * double(k) / best / 1e9);
}

void set_counters(benchmark::State& state, int64_t m, int64_t k, int64_t n, size_t w_bytes,
                  bool gemv) {
  const double iters = double(state.iterations());
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * double(m) * double(n) * double(k) * iters / 1e9, benchmark::Counter::kIsRate);
  state.counters["GB/s"] =
      benchmark::Counter(double(w_bytes) * iters / 1e9, benchmark::Counter::kIsRate);
  state.counters["threads"] = num_threads();
}

// frac_of_peak needs the rate, which Google Benchmark only finalises after the run; we
// time the loop ourselves for it.
double seconds_per_iter(benchmark::State& state, std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
         double(state.iterations());
}

void BM_GemmOpenBLAS(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  auto x = static_cast<const float*>(random_matrix(m, k, DType::F32));
  auto w = static_cast<const float*>(random_matrix(n, k, DType::F32));
  std::vector<float> y(size_t(m * n));
  openblas_linear(m, k, n, x, w, y.data());
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) openblas_linear(m, k, n, x, w, y.data());
  const double s = seconds_per_iter(state, t0);
  set_counters(state, m, k, n, size_t(n * k) * 4, m == 1);
  const double rate = 2.0 * double(m) * double(n) * double(k) / s / 1e9;
  state.counters["frac_of_peak"] = rate / openblas_gflops(m, k, n, rate);
}

template <DType WT>
void BM_Gemm(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const void* x = random_matrix(m, k, DType::F32);
  const void* w = random_matrix(n, k, WT);
  std::vector<float> y(size_t(m * n));
  GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = {x, DType::F32, k, 1};
  g.b = {w, WT, 1, k};  // B[k, n] = W[n, k]
  g.c = y.data(), g.ldc = n;
  const double anchor = openblas_gflops(m, k, n);
  cpu::gemm(g);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) cpu::gemm(g);
  const double s = seconds_per_iter(state, t0);
  set_counters(state, m, k, n, size_t(n * k) * itemsize(WT), false);
  state.counters["frac_of_peak"] = 2.0 * double(m) * double(n) * double(k) / s / 1e9 / anchor;
}

void BM_GemvOpenBLAS(benchmark::State& state) {
  const int64_t k = state.range(0), n = state.range(1);
  auto x = static_cast<const float*>(random_matrix(1, k, DType::F32));
  auto w = static_cast<const float*>(random_matrix(n, k, DType::F32));
  std::vector<float> y(static_cast<size_t>(n));
  auto run = [&] {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, int(n), int(k), 1.0f, w, int(k), x, 1, 0.0f, y.data(),
                1);
  };
  run();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) run();
  const double s = seconds_per_iter(state, t0);
  const double peak = read_bandwidth_gbs(/*fresh=*/true);
  set_counters(state, 1, k, n, size_t(n * k) * 4, true);
  state.counters["frac_of_peak"] = double(n * k) * 4 / s / 1e9 / peak;
  state.counters["probe_GB/s"] = peak;
}

template <DType WT>
void BM_Gemv(benchmark::State& state) {
  const int64_t k = state.range(0), n = state.range(1);
  const void* x = random_matrix(1, k, DType::F32);
  const void* w = random_matrix(n, k, WT);
  std::vector<float> y(static_cast<size_t>(n));
  GemmArgs g;
  g.m = 1, g.n = n, g.k = k;
  g.a = {x, DType::F32, k, 1};
  g.b = {w, WT, 1, k};
  g.c = y.data(), g.ldc = n;
  cpu::gemm(g);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) cpu::gemm(g);
  const double s = seconds_per_iter(state, t0);
  const double peak = read_bandwidth_gbs(/*fresh=*/true);
  const size_t bytes = size_t(n * k) * itemsize(WT);
  set_counters(state, 1, k, n, bytes, true);
  state.counters["frac_of_peak"] = double(bytes) / s / 1e9 / peak;
  state.counters["probe_GB/s"] = peak;
}

// The same products on a weight packed once as the kernels' panels (cpu::gemm_panels,
// the runtime's f32 linears): M, K, N; M = 1 is the decode GEMV.
void BM_GemmPanels(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int64_t width = cpu::gemm_panel_width();
  if (width == 0) {
    state.SkipWithError("the active GEMM kernels take no packed weights");
    return;
  }
  const auto* x = static_cast<const float*>(random_matrix(m, k, DType::F32));
  const auto* w = static_cast<const float*>(random_matrix(n, k, DType::F32));
  const Tensor panels = Tensor::empty({(n + width - 1) / width, k, width}, DType::F32);
  cpu::pack_weight_panels(w, k, n, k, width, panels.data<float>());
  const cpu::PanelWeight pw{panels.data<float>(), n, k, width};
  std::vector<float> y(size_t(m * n));
  const auto run = [&] { cpu::gemm_panels(m, x, k, pw, y.data(), n, 0.0f); };
  run();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) run();
  const double s = seconds_per_iter(state, t0);
  const size_t bytes = size_t(n * k) * 4;
  set_counters(state, m, k, n, bytes, m == 1);
  if (m == 1) {
    const double peak = read_bandwidth_gbs(/*fresh=*/true);
    state.counters["frac_of_peak"] = double(bytes) / s / 1e9 / peak;
    state.counters["probe_GB/s"] = peak;
  } else {
    state.counters["frac_of_peak"] =
        2.0 * double(m) * double(n) * double(k) / s / 1e9 / openblas_gflops(m, k, n);
  }
}

// M, K, N
void gemm_shapes(benchmark::internal::Benchmark* b) {
  b->Args({512, 4096, 14336})->Args({128, 1024, 3072});
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
}
// K, N
void gemv_shapes(benchmark::internal::Benchmark* b) {
  // An 8B model's MLP, a 0.6B model's MLP (in L3) and its LM head (622 MB of f32).
  b->Args({4096, 14336})->Args({1024, 3072})->Args({1024, 151936});
  b->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(1.0);
}

BENCHMARK(BM_GemmOpenBLAS)->Apply(gemm_shapes);
BENCHMARK(BM_Gemm<DType::F32>)->Apply(gemm_shapes);
BENCHMARK(BM_Gemm<DType::BF16>)->Apply(gemm_shapes);
BENCHMARK(BM_Gemm<DType::F16>)->Apply(gemm_shapes);
BENCHMARK(BM_GemmPanels)->Apply(gemm_shapes)->Args({16, 1024, 3072});
BENCHMARK(BM_GemmPanels)
    ->Args({1, 4096, 14336})
    ->Args({1, 1024, 3072})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(1.0);
BENCHMARK(BM_GemvOpenBLAS)->Apply(gemv_shapes);
BENCHMARK(BM_Gemv<DType::F32>)->Apply(gemv_shapes);
BENCHMARK(BM_Gemv<DType::BF16>)->Apply(gemv_shapes);
BENCHMARK(BM_Gemv<DType::F16>)->Apply(gemv_shapes);

}  // namespace
}  // namespace ingot::bench
