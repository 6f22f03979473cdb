// The OpenVINO exporter on a Qwen3-0.6B-shaped model (28 layers, synthetic weights,
// computed in float32), side by side with onnx_decode_bench.cpp's ingot and ONNX Runtime
// numbers when run together (--benchmark_filter='Qwen3_0_6B' --benchmark_format=json):
//  * BM_OpenVINOExportQwen3_0_6B: export_for_generation to OpenVINO (one multi-token
//    stateful decode model) and the save of openvino_model.xml/.bin: seconds and the peak
//    RSS above the loaded model's (the IR shares the weights' bytes until written);
//  * BM_OpenVINODecodeQwen3_0_6B: OpenVINO CPU (float32 inference) on that model, the
//    cache in its variables, one token per step after an 8-token prompt, batch 1, 128
//    slots. OpenVINO has no C++ package here, so this runs tools/openvino/decode_loop.py
//    --bench-steps in the venv of tools/openvino/setup-venv and reports the tokens/s the
//    script measured (its own timer, compile excluded); skipped without the venv.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bench_model.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/formats/npy.h"

namespace {

namespace fs = std::filesystem;
constexpr int64_t kMaxCacheLen = 128;
constexpr int64_t kPromptLen = 8;

struct OpenVINOSetup {
  std::shared_ptr<ingot::models::PretrainedModel> model;
  fs::path dir;
  double export_seconds = 0, save_seconds = 0;
  double peak_rss_above_model_mb = 0, model_rss_mb = 0;
};

OpenVINOSetup& setup() {
  static OpenVINOSetup s = [] {
    OpenVINOSetup d;
    auto [folder, bytes] = ingot::bench::synthetic_qwen3_checkpoint();
    d.model = ingot::models::from_pretrained(folder);  // bf16 weights, float32 compute
    d.model_rss_mb = double(ingot::bench::status_kb("VmRSS:")) / 1024;
    ingot::bench::reset_peak_rss();
    ingot::exporters::OpenVINOConfig c;
    ingot::exporters::GenerationExportOptions g;
    g.max_cache_len = kMaxCacheLen;
    g.multi_token_decode = true;
    auto start = std::chrono::steady_clock::now();
    auto parts = ingot::exporters::OpenVINOExporter().export_for_generation(*d.model, c, g);
    d.export_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    d.dir = fs::temp_directory_path() / "ingot_qwen3_0.6b_decode_openvino";
    fs::create_directories(d.dir);
    start = std::chrono::steady_clock::now();
    parts.at("decode")->save((d.dir / "openvino_model.xml").string());
    d.save_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    d.peak_rss_above_model_mb = double(ingot::bench::status_kb("VmHWM:")) / 1024 - d.model_rss_mb;
    std::vector<int64_t> prompt(kPromptLen);
    for (int64_t i = 0; i < kPromptLen; ++i) prompt[size_t(i)] = 100 + i;
    ingot::formats::save_npy((d.dir / "prompt.npy").string(),
                             ingot::Tensor::from_vector(prompt, {1, kPromptLen}));
    return d;
  }();
  return s;
}

void BM_OpenVINOExportQwen3_0_6B(benchmark::State& state) {
  OpenVINOSetup& s = setup();
  for (auto _ : state) benchmark::DoNotOptimize(s.dir);
  state.counters["openvino_export_s"] = s.export_seconds;
  state.counters["openvino_save_s"] = s.save_seconds;
  state.counters["peak_rss_above_model_mb"] = s.peak_rss_above_model_mb;
  state.counters["model_rss_mb"] = s.model_rss_mb;
  state.counters["bin_mb"] = double(fs::file_size(s.dir / "openvino_model.bin")) / (1 << 20);
}
BENCHMARK(BM_OpenVINOExportQwen3_0_6B)->Iterations(1);

void BM_OpenVINODecodeQwen3_0_6B(benchmark::State& state) {
  OpenVINOSetup& s = setup();
  const char* venv = std::getenv("INGOT_OV_VENV");
  const char* home = std::getenv("HOME");
  const fs::path python =
      (venv ? fs::path(venv) : fs::path(home ? home : "/") / ".cache/ingot/ov-venv") / "bin" /
      "python";
  if (!fs::exists(python)) {
    state.SkipWithError("no OpenVINO venv (tools/openvino/setup-venv)");
    return;
  }
  const fs::path script =
      fs::path(__FILE__).parent_path() / ".." / "tools" / "openvino" / "decode_loop.py";
  const std::string cmd = "'" + python.string() + "' '" + script.string() + "' '" +
                          (s.dir / "openvino_model.xml").string() + "' --prompt '" +
                          (s.dir / "prompt.npy").string() + "' --steps 1 --bench-steps 16 2>&1";
  nlohmann::json result;
  for (auto _ : state) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
    if (::pclose(p) != 0) {
      state.SkipWithError(("decode_loop.py failed: " + out).c_str());
      return;
    }
    result = nlohmann::json::parse(out.substr(out.rfind('{')), nullptr, false);
  }
  if (!result.is_object() || !result.contains("decode_tokens_per_s")) {
    state.SkipWithError("decode_loop.py printed no tokens/s");
    return;
  }
  state.counters["openvino_tokens_per_s"] = result["decode_tokens_per_s"].get<double>();
  state.SetLabel("openvino " + result.value("openvino", std::string("?")) +
                 " (python, stateful, f32)");
}
BENCHMARK(BM_OpenVINODecodeQwen3_0_6B)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace
