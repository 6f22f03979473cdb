// Weight-only quantised export (issue 17) on the Qwen3-0.6B shape (bench_model.h: bf16
// checkpoint, the one multi-token decode graph, batch 1, 256-slot cache), next to the
// float programs: decode tokens/s (one token per step after an 8-token prompt), prefill
// tokens/s (a 64-token prompt into an empty cache), the .ingot artifact's size and the
// peak RSS over export + run. int8 / int4 quantise every linear and the tied lm_head
// (what llama.cpp's Q8_0 / Q4_0 do with the output matrix). int8 / int4 run the library's
// default activations (int8 per 32-block, cpu::QuantActivations::Int8, unless
// INGOT_QUANT_ACTIVATIONS says otherwise); the `_f32act` variants run the same programs
// with the f32-activation opt-out (QuantActivations::Float), for A/B.
//   build/release/bench/ingot_bench --benchmark_filter='Quantized'
// And the kernel alone: BM_QuantizedGemv streams one [N, K] packed weight per call
// (GB/s of packed bytes), BM_QuantizedGemv/f32 the same shape through cpu::gemm.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>

#include "bench_model.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/model.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"

namespace {

namespace fs = std::filesystem;
constexpr int64_t kCacheLen = 256, kPrompt = 8, kPrefill = 64;

struct Variant {
  std::shared_ptr<ingot::models::PretrainedModel> model;
  ingot::ExportedProgram decode;
  double artifact_mb = 0, peak_rss_mb = 0;
};

// "f32", "bf16" (compute dtype, float weights) or "int8" / "int4" (f32 compute, the
// lm_head quantised with the scheme, as llama.cpp's Q8_0 / Q4_0 files do); "int4_head8":
// int4 with the export's default lm_head (int8), "int4_headf32": int4 with the lm_head
// kept float (keep_lm_head_float). A name ending in "_f32act" runs the same program with
// f32 activations.
bool f32_activations(const std::string& name) {
  return name.ends_with("_f32act");
}

Variant& variant(std::string name) {
  if (f32_activations(name)) name.resize(name.size() - 7);
  static std::map<std::string, Variant> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  ingot::bench::reset_peak_rss();
  Variant v;
  auto [folder, bytes] = ingot::bench::synthetic_qwen3_checkpoint();
  ingot::models::LoadOptions load;
  if (name == "bf16") load.compute_dtype = ingot::DType::BF16;
  v.model = ingot::models::from_pretrained(folder, load);
  ingot::exporters::NativeExportConfig c;
  if (name == "int8" || name == "int4") {
    c.quantizer.scheme = name;
    c.quantizer.group_size = 32;
    c.quantizer.lm_head = true;
  } else if (name.starts_with("int4_head")) {
    c.quantizer.scheme = "int4";
    c.quantizer.group_size = 32;
    c.quantizer.keep_lm_head_float = name == "int4_headf32";
  }
  ingot::exporters::GenerationExportOptions g;
  g.max_cache_len = kCacheLen;
  auto parts = ingot::exporters::NativeExporter().export_for_generation(*v.model, c, g);
  const fs::path file = fs::temp_directory_path() / ("ingot_qwen3_quant_" + name + ".ingot");
  parts.at("decode")->save(file.string());
  v.artifact_mb = double(fs::file_size(file)) / 1e6;
  fs::remove(file);
  v.decode = parts.at("decode")->program;
  return cache.emplace(name, std::move(v)).first->second;
}

void run_steps(benchmark::State& state, const std::string& name, bool prefill) {
  // The default mode unless the name asks for the f32-activation opt-out.
  ingot::cpu::ScopedQuantActivations act(f32_activations(name) ? ingot::cpu::QuantActivations::Float
                                                               : ingot::cpu::quant_activations());
  Variant& v = variant(name);
  ingot::runtime::ProgramModule mod(v.decode);
  ingot::nn::StaticCache cache(*v.model->cache_spec(), 1, kCacheLen);
  std::vector<int64_t> ids(size_t(prefill ? kPrefill : kPrompt));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int64_t(100 + 7 * i);
  const ingot::Tensor prompt = ingot::Tensor::from_vector(ids, {1, int64_t(ids.size())});
  const ingot::Tensor token = ingot::Tensor::from_vector<int64_t>({17}, {1, 1});
  mod(prompt, cache);  // warm-up (plans)
  if (!prefill) mod(token, cache);
  int64_t tokens = 0;
  for (auto _ : state) {
    if (prefill || cache.seq_length() + 1 > kCacheLen) {
      state.PauseTiming();
      cache.reset();
      if (!prefill) mod(prompt, cache);
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(mod(prefill ? prompt : token, cache));
    tokens += prefill ? kPrefill : 1;
  }
  state.counters["tokens_per_s"] = benchmark::Counter(double(tokens), benchmark::Counter::kIsRate);
  state.counters["artifact_MB"] = v.artifact_mb;
  state.counters["peak_rss_MB"] = double(ingot::bench::status_kb("VmHWM:")) / 1024.0;
}

void BM_QuantizedDecodeQwen3_0_6B(benchmark::State& state, const char* name) {
  run_steps(state, name, false);
}
void BM_QuantizedPrefillQwen3_0_6B(benchmark::State& state, const char* name) {
  run_steps(state, name, true);
}

// Interleaved by registration order: f32, bf16, int8, int4 for decode, then prefill.
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, f32, "f32")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, bf16, "bf16")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, int8, "int8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, int4_g32, "int4")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, int4_g32_head8, "int4_head8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, int4_g32_headf32, "int4_headf32")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, int8_f32act, "int8_f32act")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedDecodeQwen3_0_6B, int4_g32_f32act, "int4_f32act")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(24)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedPrefillQwen3_0_6B, f32, "f32")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedPrefillQwen3_0_6B, bf16, "bf16")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedPrefillQwen3_0_6B, int8, "int8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedPrefillQwen3_0_6B, int4_g32, "int4")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedPrefillQwen3_0_6B, int8_f32act, "int8_f32act")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizedPrefillQwen3_0_6B, int4_g32_f32act, "int4_f32act")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

// m x rows against a packed [N, K] weight: the decode GEMV (m = 1) and prefill.
// Args: bits (0 = f32 gemm), N, K, activations (0 float, 1 int8: the kernel the crossover
// picks, 2 int8 with the per-row kernel forced, the one before the panel GEMM, 3 int8 with
// the ymm panel GEMM forced from m = 1), m.
// Counters: GB_per_s of packed bytes, GOP_per_s = 2 m N K / time.
void BM_QuantizedGemv(benchmark::State& state) {
  const int bits = int(state.range(0));
  const int64_t n = state.range(1), k = state.range(2), m = state.range(4);
  ingot::cpu::ScopedQuantActivations act(state.range(3) ? ingot::cpu::QuantActivations::Int8
                                                        : ingot::cpu::QuantActivations::Float);
  const int64_t min_rows = ingot::cpu::set_quant_panel_min_rows(
      state.range(3) == 2 ? int64_t(1) << 40 : ingot::cpu::quant_panel_min_rows());
  const int64_t ymm_min_rows = ingot::cpu::set_quant_ymm_panel_min_rows(
      state.range(3) == 2   ? int64_t(1) << 40
      : state.range(3) == 3 ? int64_t(1)
                            : ingot::cpu::quant_ymm_panel_min_rows());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> w(static_cast<size_t>(n * k)), x(static_cast<size_t>(m * k)),
      y(static_cast<size_t>(m * n));
  for (float& f : w) f = u(rng);
  for (float& f : x) f = u(rng);
  ingot::cpu::PackedBuffers p;
  ingot::cpu::PackedWeight pw;
  if (bits) {
    p = ingot::cpu::quantize_weight(w.data(), n, k, bits, bits == 8 ? k : 32, false);
    pw = {p.q.data(), p.scales.data(), nullptr, bits, n, k, bits == 8 ? k : 32};
  }
  for (auto _ : state) {
    if (bits) {
      ingot::cpu::quantized_matmul(x.data(), k, m, pw, y.data(), n);
    } else {
      ingot::cpu::GemmArgs g;
      g.m = m, g.n = n, g.k = k;
      g.a = {x.data(), ingot::DType::F32, k, 1};
      g.b = {w.data(), ingot::DType::F32, 1, k};
      g.c = y.data();
      g.ldc = n;
      ingot::cpu::gemm(g);
    }
    benchmark::DoNotOptimize(y.data());
  }
  const double bytes = bits ? double(p.q.size() + p.scales.size() * 4) : double(w.size() * 4);
  ingot::cpu::set_quant_panel_min_rows(min_rows);
  ingot::cpu::set_quant_ymm_panel_min_rows(ymm_min_rows);
  state.counters["GB_per_s"] =
      benchmark::Counter(bytes * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.counters["GOP_per_s"] = benchmark::Counter(
      2.0 * double(m * n * k) * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_QuantizedGemv)
    ->ArgsProduct({{0, 8, 4}, {3072}, {1024}, {0}, {1, 64}})
    ->ArgsProduct({{0, 8, 4}, {1024}, {3072}, {0}, {1, 64}})
    ->ArgsProduct({{8, 4}, {3072}, {1024}, {1}, {1, 64}})
    ->ArgsProduct({{8, 4}, {1024}, {3072}, {1}, {1, 64}})
    ->ArgsProduct({{0, 8, 4}, {151936}, {1024}, {1}, {1}})  // the LM head: weights in DRAM
    ->UseRealTime();
// Prefill with int8 activations: the panel GEMM (1) against the per-row kernel (2),
// (--benchmark_repetitions=N --benchmark_enable_random_interleaving=true interleaves them).
void BM_QuantizedGemvPrefill(benchmark::State& state) {
  BM_QuantizedGemv(state);
}
void BM_QuantizedGemvPrefillYmm(benchmark::State& state) {
  BM_QuantizedGemv(state);
}
BENCHMARK(BM_QuantizedGemvPrefill)
    ->ArgsProduct({{8, 4}, {3072}, {1024}, {2, 1}, {16, 64, 128}})
    ->ArgsProduct({{8, 4}, {1024}, {3072}, {2, 1}, {16, 64, 128}})
    ->ArgsProduct({{8, 4}, {151936}, {1024}, {2, 1}, {16}})
    ->UseRealTime();
// The ymm tables' prefill (run with INGOT_ISA=avx2, or avxvnni): the ymm row kernels (2)
// against the 8-row panel GEMM (3) from m = 5, on SmolLM2-135M's MLP shapes ([576 -> 1536],
// [1536 -> 576]) and Qwen3-0.6B's ([1024 -> 3072], [3072 -> 1024]): the crossover and the
// prefill ratio (docs/quantization.md, "Kernel tables").
BENCHMARK(BM_QuantizedGemvPrefillYmm)
    ->ArgsProduct({{8, 4}, {1536}, {576}, {2, 3}, {5, 6, 7, 8, 12, 16, 128}})
    ->ArgsProduct({{8, 4}, {576}, {1536}, {2, 3}, {5, 6, 7, 8, 12, 16, 128}})
    ->ArgsProduct({{8, 4}, {3072}, {1024}, {2, 3}, {5, 6, 7, 8, 12, 16, 128}})
    ->ArgsProduct({{8, 4}, {1024}, {3072}, {2, 3}, {5, 6, 7, 8, 12, 16, 128}})
    ->UseRealTime();

}  // namespace
