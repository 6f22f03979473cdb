// Exporting a Qwen3-0.6B-shaped model (28 layers, bf16 weights mapped from a synthetic
// checkpoint) with dynamic batch and sequence: trace time and the peak RSS growth during export
// next to the weight bytes. Export never reads weight data, so the mapped pages stay untouched: the
// goal is a growth far below 1.2 x the weights.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "bench_model.h"
#include "ingot/export/export.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/formats/serialize.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"

namespace {

void BM_ExportQwen3_0_6B(benchmark::State& state) {
  auto [dir, file_bytes] = ingot::bench::synthetic_qwen3_checkpoint();
  auto model = ingot::models::from_pretrained(dir, {ingot::DType::BF16});
  ingot::Tensor ids = ingot::zeros({1, 16}, ingot::DType::I64);
  auto forward = [&](const ingot::Tensor& input_ids) {
    ingot::models::ModelInputs in;
    in.input_ids = input_ids;
    return model->forward(in).logits;
  };
  ingot::ExportOptions options;
  options.input_names = {"input_ids"};
  options.dynamic_shapes = ingot::DynamicShapes::tuple({ingot::DynamicShapes::tensor(
      {{0, ingot::Dim("batch", 1, 64)}, {1, ingot::Dim("seq", 1, 4096)}})});
  int64_t peak_growth_kb = 0;
  size_t nodes = 0;
  for (auto _ : state) {
    const int64_t before = ingot::bench::status_kb("VmRSS:");
    ingot::bench::reset_peak_rss();
    ingot::ExportedProgram ep = ingot::export_(model.get(), forward, std::tuple{ids}, options);
    peak_growth_kb = std::max(peak_growth_kb, ingot::bench::status_kb("VmHWM:") - before);
    nodes = ep.graph->nodes().size();
    benchmark::DoNotOptimize(ep);
  }
  state.counters["nodes"] = double(nodes);
  state.counters["weights_MB"] = double(file_bytes) / 1e6;
  state.counters["peak_rss_growth_MB"] = double(peak_growth_kb) * 1024 / 1e6;
  state.counters["rss_growth_fraction_of_weights"] =
      double(peak_growth_kb) * 1024 / double(file_bytes);
}
BENCHMARK(BM_ExportQwen3_0_6B)->Unit(benchmark::kMillisecond)->Iterations(5);

// The exported program of the same model, made once.
const ingot::ExportedProgram& qwen3_program() {
  static const ingot::ExportedProgram ep = [] {
    auto [dir, bytes] = ingot::bench::synthetic_qwen3_checkpoint();
    auto model = ingot::models::from_pretrained(dir, {ingot::DType::BF16});
    ingot::exporters::PretrainedExportOptions o;
    o.dynamic = true;
    return ingot::exporters::export_pretrained(*model, o);
  }();
  return ep;
}

std::string archive_path() {
  return (std::filesystem::temp_directory_path() / "ingot_qwen3_0.6b_shaped.ingot").string();
}

// Writing the archive: 1.2 GB of weights copied from the mapped checkpoint.
void BM_SaveQwen3_0_6B(benchmark::State& state) {
  const ingot::ExportedProgram& ep = qwen3_program();
  for (auto _ : state) ingot::save(ep, archive_path());
  state.counters["file_MB"] = double(std::filesystem::file_size(archive_path())) / 1e6;
}
BENCHMARK(BM_SaveQwen3_0_6B)->Unit(benchmark::kMillisecond)->Iterations(2);

// Loading it: the JSON program is parsed and checked, the weights are mapped.
void BM_LoadQwen3_0_6B(benchmark::State& state) {
  if (!std::filesystem::exists(archive_path())) ingot::save(qwen3_program(), archive_path());
  int64_t peak_growth_kb = 0;
  for (auto _ : state) {
    const int64_t before = ingot::bench::status_kb("VmRSS:");
    ingot::bench::reset_peak_rss();
    ingot::ExportedProgram ep = ingot::load(archive_path());
    peak_growth_kb = std::max(peak_growth_kb, ingot::bench::status_kb("VmHWM:") - before);
    benchmark::DoNotOptimize(ep);
  }
  state.counters["peak_rss_growth_MB"] = double(peak_growth_kb) * 1024 / 1e6;
}
BENCHMARK(BM_LoadQwen3_0_6B)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
