// The ExecuTorch exporter on a Qwen3-0.6B-shaped model (28 layers, synthetic weights,
// float32 compute), side by side in one run:
//  * BM_ExecutorchExportQwen3_0_6B: export_for_generation's decode component through the
//    ExecuTorch exporter and the .pte write: seconds, peak RSS growth, .pte size (the
//    weights are streamed from their tensors into the file once);
//  * BM_IngotDecodeOnExecutorchProgram: ingot's runtime on the program the .pte was emitted
//    from (the StaticCache written in place);
//  * BM_ExecutorchPortableDecodeQwen3_0_6B: ExecuTorch's runtime (portable kernels) on the
//    .pte: tools/executorch/decode_loop.py --bench-steps in the reference venv, its own timer
//    (program load excluded); skipped without the venv. xnnpack is not implemented.
// Batch 1, an 8-token prompt, one token per step, a cache of 128 slots.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench_model.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/models/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace {

namespace fs = std::filesystem;
constexpr int64_t kMaxCacheLen = 128;
constexpr int64_t kPromptLen = 8;

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

struct EtSetup {
  std::shared_ptr<ingot::models::PretrainedModel> model;
  std::unique_ptr<ingot::exporters::ExportArtifact> decode;
  fs::path dir;
  double export_s = 0, save_s = 0, rss_before = 0, rss_after = 0, pte_mib = 0;
};

EtSetup& setup() {
  static EtSetup s = [] {
    EtSetup d;
    auto [folder, bytes] = ingot::bench::synthetic_qwen3_checkpoint();
    d.model = ingot::models::from_pretrained(folder);
    d.rss_before = peak_rss_mib();
    ingot::exporters::ExecutorchConfig c;
    ingot::exporters::GenerationExportOptions g;
    g.max_cache_len = kMaxCacheLen;
    auto t0 = std::chrono::steady_clock::now();
    d.decode = std::move(
        ingot::exporters::ExecutorchExporter().export_for_generation(*d.model, c, g).at("decode"));
    auto t1 = std::chrono::steady_clock::now();
    d.dir = fs::temp_directory_path() / "ingot_qwen3_0.6b_decode_executorch";
    fs::create_directories(d.dir);
    d.decode->save((d.dir / "decode.pte").string());
    auto t2 = std::chrono::steady_clock::now();
    d.rss_after = peak_rss_mib();
    d.export_s = std::chrono::duration<double>(t1 - t0).count();
    d.save_s = std::chrono::duration<double>(t2 - t1).count();
    d.pte_mib = double(fs::file_size(d.dir / "decode.pte")) / (1024.0 * 1024.0);
    auto& p = dynamic_cast<ingot::exporters::ExecutorchProgram&>(*d.decode);
    std::vector<int64_t> prompt(kPromptLen);
    for (int64_t i = 0; i < kPromptLen; ++i) prompt[size_t(i)] = 100 + i;
    ingot::models::save_npy((d.dir / "prompt.npy").string(),
                            ingot::Tensor::from_vector(prompt, {1, kPromptLen}));
    nlohmann::json io{{"inputs", p.input_names},
                      {"outputs", p.output_names},
                      {"prompt", "prompt.npy"},
                      {"initial", nlohmann::json::object()}};
    ingot::nn::StaticCache cache(*d.model->cache_spec(), 1, kMaxCacheLen);
    for (const auto& [name, t] : cache.named_tensors()) {
      ingot::models::save_npy((d.dir / (name + ".npy")).string(), ingot::contiguous(t));
      io["initial"][name] = name + ".npy";
    }
    std::ofstream(d.dir / "io.json") << io.dump();
    return d;
  }();
  return s;
}

void BM_ExecutorchExportQwen3_0_6B(benchmark::State& state) {
  EtSetup& s = setup();
  for (auto _ : state) benchmark::DoNotOptimize(s.export_s);
  state.counters["export_ms"] = s.export_s * 1e3;
  state.counters["save_pte_s"] = s.save_s;
  state.counters["peak_rss_growth_mib"] = s.rss_after - s.rss_before;
  state.counters["pte_mib"] = s.pte_mib;
}
BENCHMARK(BM_ExecutorchExportQwen3_0_6B)->Iterations(1);

void BM_IngotDecodeOnExecutorchProgram(benchmark::State& state) {
  EtSetup& s = setup();
  auto mod = ingot::runtime::ProgramModule(s.decode->program);
  ingot::nn::StaticCache cache(*s.model->cache_spec(), 1, kMaxCacheLen);
  ingot::Tensor prompt = ingot::models::load_npy((s.dir / "prompt.npy").string());
  ingot::Tensor token = ingot::zeros({1, 1}, ingot::DType::I64);
  mod(prompt, cache);
  int64_t steps = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(mod(token, cache));
    ++steps;
  }
  state.counters["tokens_per_s"] = benchmark::Counter(double(steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IngotDecodeOnExecutorchProgram)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(16)
    ->UseRealTime();

void BM_ExecutorchPortableDecodeQwen3_0_6B(benchmark::State& state) {
  EtSetup& s = setup();
  const char* venv = std::getenv("INGOT_REF_VENV");
  const char* home = std::getenv("HOME");
  const fs::path python =
      (venv ? fs::path(venv) : fs::path(home ? home : "/") / ".cache/ingot/ref-venv") / "bin" /
      "python";
  if (!fs::exists(python)) {
    state.SkipWithError("no reference venv (tools/reference/setup-venv)");
    return;
  }
  const fs::path script =
      fs::path(__FILE__).parent_path() / ".." / "tools" / "executorch" / "decode_loop.py";
  const std::string cmd = "'" + python.string() + "' '" + script.string() + "' '" +
                          (s.dir / "decode.pte").string() + "' --io '" +
                          (s.dir / "io.json").string() + "' --steps 1 --bench-steps 8 2>/dev/null";
  nlohmann::json result;
  for (auto _ : state) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
    if (::pclose(p) != 0 || out.rfind('{') == std::string::npos) {
      state.SkipWithError(("decode_loop.py failed: " + out).c_str());
      return;
    }
    result = nlohmann::json::parse(out.substr(out.rfind('{')), nullptr, false);
  }
  if (!result.is_object() || !result["decode_tokens_per_s"].is_number()) {
    state.SkipWithError("decode_loop.py printed no tokens/s");
    return;
  }
  state.counters["executorch_tokens_per_s"] = result["decode_tokens_per_s"].get<double>();
  state.SetLabel("executorch " + result.value("executorch", std::string("?")) +
                 " portable kernels (python runtime)");
}
BENCHMARK(BM_ExecutorchPortableDecodeQwen3_0_6B)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
