// Generation on a Qwen3-0.6B-shaped model (synthetic checkpoint, 28 layers) through
// export_for_generation + the runtime Generator: prefill and decode tokens/s, and the
// decode roofline fraction = weight bytes x decode tokens/s / measured read bandwidth
// (each decode step must stream every weight once).
#include <benchmark/benchmark.h>

#include "bench_common.h"
#include "bench_model.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/runtime/generator.h"

namespace {

void BM_GenerateQwen3_0_6B(benchmark::State& state, ingot::DType dtype) {
  auto [dir, file_bytes] = ingot::bench::synthetic_qwen3_checkpoint();
  auto model = ingot::models::from_pretrained(dir, {dtype});
  int64_t weight_bytes = 0;
  for (const auto& [name, t] : model->state_dict()) weight_bytes += int64_t(t.nbytes());
  ingot::exporters::GenerationExportOptions o;
  o.max_cache_len = 128;
  ingot::runtime::Generator gen((ingot::exporters::NativeExporter().export_for_generation(
                                     *model, ingot::exporters::NativeExportConfig(), o))
                                    .package(),
                                std::nullopt, ingot::runtime::RuntimeOptions::from_environment());
  std::vector<int64_t> prompt(16);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int64_t(i * 7 + 1);
  ingot::runtime::GenerateOptions go;
  go.max_new_tokens = 16;
  ingot::runtime::GenerationStats stats;
  // Warm-up: the first run faults the mapped weights in and fills the memory pool.
  gen.generate(prompt, go, &stats);
  for (auto _ : state) gen.generate(prompt, go, &stats);
  const double bandwidth = ingot::bench::read_bandwidth_gbs(true) * 1e9;
  state.counters["prefill_tok_s"] = stats.prefill_tokens_per_second();
  state.counters["decode_tok_s"] = stats.decode_tokens_per_second();
  state.counters["weights_MB"] = double(weight_bytes) / 1e6;
  state.counters["bandwidth_GBs"] = bandwidth / 1e9;
  state.counters["decode_roofline_fraction"] =
      double(weight_bytes) * stats.decode_tokens_per_second() / bandwidth;
}
BENCHMARK_CAPTURE(BM_GenerateQwen3_0_6B, f32, ingot::DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_GenerateQwen3_0_6B, bf16, ingot::DType::BF16)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
