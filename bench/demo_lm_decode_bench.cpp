// Decode steps of the demo LM (assets/demo-lm: a 4-layer, 256-wide Llama, ~5 MB of
// weights), a model small enough that a step is dominated by per-node overhead: the
// execution plan (runtime/execution_plan.h) against the interpreter on the same
// ProgramModule graph. Counters: tokens/s, µs per step, and µs per graph node.
//   build/release/bench/ingot_bench --benchmark_filter=DemoLmDecode
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>

#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace {

constexpr int64_t kMaxCacheLen = 256;

std::string demo_dir() {
  const char* root = std::getenv("INGOT_SOURCE_DIR");
  const std::string file = __FILE__;
  const std::string source = root ? root : file.substr(0, file.rfind("/bench/"));
  return source + "/assets/demo-lm";
}

void BM_DemoLmDecode(benchmark::State& state, bool planned) {
  static auto model = ingot::models::from_pretrained(demo_dir());
  static const ingot::ExportedProgram decode = [] {
    ingot::exporters::GenerationExportOptions o;
    o.max_cache_len = kMaxCacheLen;
    return (ingot::exporters::NativeExporter().export_for_generation(
                *model, ingot::exporters::NativeExportConfig(), o))
        .package()
        .at("decode");
  }();
  ingot::runtime::ProgramModule mod(decode);
  mod.set_planning(planned);
  ingot::nn::StaticCache cache(*model->cache_spec(), 1, kMaxCacheLen);
  ingot::Tensor token = ingot::Tensor::from_vector<int64_t>({17}, {1, 1});
  mod(token, cache);  // warm-up: builds the plan
  int64_t steps = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (cache.seq_length() + 1 > kMaxCacheLen) {
      state.PauseTiming();
      cache.reset();
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(mod(token, cache));
    ++steps;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double nodes = double(decode.graph->nodes().size());
  state.counters["tokens_per_s"] = double(steps) / seconds;
  state.counters["nodes"] = nodes;
  // Step time spread over the graph's nodes (kernels included; the planned/interpreter
  // difference is the per-node overhead the plan removes).
  state.counters["ns_per_node"] = seconds * 1e9 / double(steps) / nodes;
  state.counters["planned_runs"] = double(mod.num_planned_runs());
}
BENCHMARK_CAPTURE(BM_DemoLmDecode, planned, true)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DemoLmDecode, interpreter, false)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
