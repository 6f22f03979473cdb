// Loading a Qwen3-0.6B-shaped checkpoint: time and memory of from_pretrained.
//
// The checkpoint (config.json + a 1.2 GB bf16 model.safetensors, sparse on disk) is
// written once to the temp dir. With compute dtype bf16 the weights are views of the
// mapped file, so resident memory grows by far less than the file: the counters report
// the peak RSS growth during the load next to the file size.
#include <benchmark/benchmark.h>

#include "bench_model.h"
#include "ingot/models/model.h"

namespace {

void BM_FromPretrainedQwen3_0_6B_Bf16(benchmark::State& state) {
  auto [dir, file_bytes] = ingot::bench::synthetic_qwen3_checkpoint();
  int64_t peak_growth_kb = 0;
  for (auto _ : state) {
    const int64_t before = ingot::bench::status_kb("VmRSS:");
    ingot::bench::reset_peak_rss();
    auto model = ingot::models::from_pretrained(dir, {ingot::DType::BF16});
    peak_growth_kb = std::max(peak_growth_kb, ingot::bench::status_kb("VmHWM:") - before);
    benchmark::DoNotOptimize(model);
  }
  state.counters["file_MB"] = double(file_bytes) / 1e6;
  state.counters["peak_rss_growth_MB"] = double(peak_growth_kb) * 1024 / 1e6;
  state.counters["rss_growth_fraction_of_file"] = double(peak_growth_kb) * 1024 / double(file_bytes);
}
BENCHMARK(BM_FromPretrainedQwen3_0_6B_Bf16)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
