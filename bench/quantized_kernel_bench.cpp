// Decode GEMV (m = 1) and small-m products per kernel table (issue 38): one [N, K] weight
// as bf16 (cpu::gemm), int8 per channel or int4 G 32 (cpu::quantized_matmul) with int8
// activations (the default) or f32 ones (the opt-out), at a chosen kernel table
// (cpu::set_quant_isa / set_gemm_isa), so the paths a CPU runs are compared in one process.
// Counters: GB_per_s of weight bytes streamed (packed bytes + scales; bf16: 2 per weight),
// frac_of_bw (that over the read probe, measured fresh right after the loop) and the
// label naming the kernel ("int4 a8 avx2-maddubs"). A table the CPU cannot run is
// skipped with the reason.
//   build/release/bench/ingot_bench --benchmark_filter=QuantKernelTable
//     --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true (one line)
// Args: kind (16 bf16, 8 int8, 4 int4), activations (0 f32, 1 int8), table (QuantIsa:
// 0 scalar, 1 avx2, 2 avxvnni, 3 avx512), N, K, m, copies: an iteration runs the product
// on `copies` weights at different addresses in turn (a decode step's many per-layer
// matrices, each read from DRAM once per step, not from the L3).
#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench_common.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/cpu/quantized_gemv.h"

namespace ingot::bench {
namespace {

// A packed [n, k] weight (int8 per channel or int4 G 32, no zero points), made once.
const cpu::PackedBuffers& packed(int bits, int64_t n, int64_t k) {
  static std::map<std::tuple<int, int64_t, int64_t>, cpu::PackedBuffers> cache;
  auto it = cache.find({bits, n, k});
  if (it != cache.end()) return it->second;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> w(size_t(n * k));
  for (float& f : w) f = u(rng);
  return cache
      .emplace(std::tuple{bits, n, k},
               cpu::quantize_weight(w.data(), n, k, bits, bits == 8 ? k : 32, false))
      .first->second;
}

cpu::GemmIsa gemm_table(cpu::QuantIsa isa) {
  switch (isa) {
    case cpu::QuantIsa::Scalar:
      return cpu::GemmIsa::Scalar;
    case cpu::QuantIsa::Avx2:
    case cpu::QuantIsa::AvxVnni:
      return cpu::GemmIsa::Avx2;
    case cpu::QuantIsa::Avx512:
      return cpu::GemmIsa::Avx512;
  }
  return cpu::GemmIsa::Scalar;
}

void BM_QuantKernelTable(benchmark::State& state) {
  const int kind = int(state.range(0));
  const bool int8_act = state.range(1) != 0;
  const auto isa = cpu::QuantIsa(state.range(2));
  const int64_t n = state.range(3), k = state.range(4), m = state.range(5);
  const int64_t copies = state.range(6);
  if (!cpu::quant_isa_supported(isa)) {
    state.SkipWithError("this CPU (after INGOT_ISA) cannot run this kernel table");
    return;
  }
  const cpu::QuantIsa isa_before = cpu::quant_isa();
  const cpu::GemmIsa gemm_before = cpu::gemm_isa();
  cpu::set_quant_isa(isa);
  cpu::set_gemm_isa(gemm_table(isa));
  cpu::ScopedQuantActivations act(int8_act ? cpu::QuantActivations::Int8
                                           : cpu::QuantActivations::Float);
  const auto* x = static_cast<const float*>(random_matrix(m, k, DType::F32));
  std::vector<float> y(size_t(m * n));
  std::string label;
  double bytes = 0;
  std::function<void()> run;
  std::vector<cpu::PackedWeight> pw;
  std::vector<std::vector<uint8_t>> q_copies;
  std::vector<std::vector<float>> s_copies;
  cpu::GemmArgs g;
  if (kind == 16) {
    g.m = m, g.n = n, g.k = k;
    g.a = {x, DType::F32, k, 1};
    const auto* w = static_cast<const uint16_t*>(random_matrix(n * copies, k, DType::BF16));
    g.c = y.data(), g.ldc = n;
    run = [&, w] {
      for (int64_t c = 0; c < copies; ++c) {
        g.b = {w + c * n * k, DType::BF16, 1, k};
        cpu::gemm(g);
      }
    };
    bytes = double(n * k) * 2;
    label = std::string("bf16 ") + std::string(cpu::gemm_isa_name(cpu::gemm_isa()));
  } else {
    const cpu::PackedBuffers& p = packed(kind, n, k);
    for (int64_t c = 0; c < copies; ++c) {  // the same values at other addresses
      q_copies.push_back(p.q);
      s_copies.push_back(p.scales);
      pw.push_back({q_copies.back().data(), s_copies.back().data(), nullptr, kind, n, k,
                    kind == 8 ? k : 32});
    }
    run = [&] {
      for (const cpu::PackedWeight& w : pw) cpu::quantized_matmul(x, k, m, w, y.data(), n);
    };
    bytes = double(p.q.size() + p.scales.size() * 4);
    label = "int" + std::to_string(kind) +
            (int8_act ? std::string(" a8 ") + cpu::int8_dot_kernel_name(cpu::int8_dot_kernel(isa))
                      : std::string(" f32act table ") + std::to_string(int(isa)));
  }
  run();  // warm: pool threads, scratch buffers
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(y.data());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                   double(state.iterations() * copies);  // per product
  const double bw = read_bandwidth_gbs(/*fresh=*/true);
  cpu::set_quant_isa(isa_before);
  cpu::set_gemm_isa(gemm_before);
  state.SetLabel(label + (copies > 1 ? " x" + std::to_string(copies) : ""));
  state.counters["GB_per_s"] = bytes / s / 1e9;
  state.counters["frac_of_bw"] = bytes / s / 1e9 / bw;
  state.counters["probe_GB/s"] = bw;
  state.counters["GOP_per_s"] = 2.0 * double(m * n * k) / s / 1e9;
}

// Per shape: bf16 at the table's GEMM level, then int8 / int4 with f32 and int8
// activations, at every table. Shapes: the Qwen3-0.6B LM head (weights far past the L3,
// what decode streams from DRAM), an 8B model's MLP (also past a 32 MiB L3) and a 0.6B
// MLP projection (in L3: the kernels' compute limit).
void tables(benchmark::internal::Benchmark* b) {
  const auto table = [&](int64_t isa, int64_t n, int64_t k, int64_t m, int64_t copies) {
    b->Args({16, 0, isa, n, k, m, copies});
    for (int64_t kind : {8, 4})
      for (int64_t act : {0, 1}) b->Args({kind, act, isa, n, k, m, copies});
  };
  for (auto [n, k] : {std::pair<int64_t, int64_t>{151936, 1024}, {14336, 4096}, {3072, 1024}})
    for (int64_t m : {1, 4})
      for (int64_t isa : {1, 2, 3}) table(isa, n, k, m, 1);
  // A 0.6B model's down projection and its gate (up) projection, 48 copies each (int4
  // 95 MB, bf16 302 MB: past the L3).
  for (int64_t isa : {1, 2, 3}) table(isa, 1024, 3072, 1, 48);
  for (int64_t isa : {1, 2, 3}) table(isa, 3072, 1024, 1, 48);
  // SmolLM2-135M's gate (up) and down projections (k 576 and 1536: short rows, where the
  // per-row and per-group costs show), 60 and 30 copies: a decode step's bytes.
  for (int64_t isa : {1, 2, 3}) table(isa, 1536, 576, 1, 60);
  for (int64_t isa : {1, 2, 3}) table(isa, 576, 1536, 1, 30);
  table(1, 1024, 3072, 1, 1);  // the same, one copy (L3-resident): the per-call costs
  table(0, 3072, 1024, 1, 1);  // the portable kernels (what ARM runs), in L3: they are slow
  b->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(0.5);
}
BENCHMARK(BM_QuantKernelTable)->Apply(tables);

}  // namespace
}  // namespace ingot::bench
