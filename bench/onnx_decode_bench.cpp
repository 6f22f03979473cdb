// Decode tokens/s of a Qwen3-0.6B-shaped model (28 layers, synthetic weights, computed in
// float32) on the decode graph that OnnxExporter::export_for_generation makes, run two
// ways side by side:
//  * BM_IngotDecodeQwen3_0_6B: ingot's own runtime on the ExportedProgram the ONNX model
//    was lowered from, the StaticCache written in place (and BM_IngotNativeDecode... on
//    the native exporter's decode graph of the same model);
//  * BM_OrtDecodeQwen3_0_6B: ONNX Runtime (CPU) on that ONNX model, the cache bound in place
//    with IO binding. ORT has no C++ package here, so this benchmark runs
//    tools/onnx/decode_loop.py --bench-steps in the venv of tools/onnx/setup-venv and
//    reports the tokens/s the script measured (its own timer, session creation excluded);
//    it is skipped without the venv.
// Both decode one token per step after an 8-token prompt, batch 1, cache of 128 slots.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bench_model.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace {

namespace fs = std::filesystem;
constexpr int64_t kMaxCacheLen = 128;
constexpr int64_t kPromptLen = 8;

struct DecodeSetup {
  std::shared_ptr<ingot::models::PretrainedModel> model;
  std::unique_ptr<ingot::exporters::ExportArtifact> artifact;  // ONNX (and its program)
  std::unique_ptr<ingot::exporters::ExportArtifact> native;    // the native decode graph
  fs::path dir;
  double export_seconds = 0;
};

// The decode graph, exported once (float32 compute; weights as external data).
DecodeSetup& setup() {
  static DecodeSetup s = [] {
    DecodeSetup d;
    auto [folder, bytes] = ingot::bench::synthetic_qwen3_checkpoint();
    d.model = ingot::models::from_pretrained(folder);  // bf16 weights, float32 compute
    ingot::exporters::OnnxConfig c;
    c.dynamic = true;
    c.external_data = "always";
    ingot::exporters::GenerationExportOptions g;
    g.max_cache_len = kMaxCacheLen;
    const auto start = std::chrono::steady_clock::now();
    d.artifact = std::move(
        ingot::exporters::OnnxExporter().export_for_generation(*d.model, c, g).at("decode"));
    d.export_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    d.native = std::move(
        ingot::exporters::NativeExporter().export_for_generation(*d.model, c, g).at("decode"));
    d.dir = fs::temp_directory_path() / "ingot_qwen3_0.6b_decode_onnx";
    fs::create_directories(d.dir);
    d.artifact->save((d.dir / "decode.onnx").string());
    std::vector<int64_t> prompt(kPromptLen);
    for (int64_t i = 0; i < kPromptLen; ++i) prompt[size_t(i)] = 100 + i;
    ingot::formats::save_npy((d.dir / "prompt.npy").string(),
                             ingot::Tensor::from_vector(prompt, {1, kPromptLen}));
    return d;
  }();
  return s;
}

// One-token decode steps of `program` with its StaticCache written in place.
void decode_steps(benchmark::State& state, const ingot::ExportedProgram& program) {
  DecodeSetup& s = setup();
  auto mod = ingot::runtime::ProgramModule(program);
  ingot::nn::StaticCache cache(*s.model->cache_spec(), 1, kMaxCacheLen);
  ingot::Tensor prompt = ingot::formats::load_npy((s.dir / "prompt.npy").string());
  ingot::Tensor token = ingot::zeros({1, 1}, ingot::DType::I64);
  mod(prompt, cache);
  int64_t steps = 0;
  for (auto _ : state) {
    if (cache.seq_length() + 1 > kMaxCacheLen) {
      state.PauseTiming();
      cache.reset();
      mod(prompt, cache);
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(mod(token, cache));
    ++steps;
  }
  state.counters["tokens_per_s"] = benchmark::Counter(double(steps), benchmark::Counter::kIsRate);
}

// The program the ONNX model was lowered from (ONNX patches and fixes applied: rms_norm
// spelled out in core ops, asserts dropped, decomposed to core ops).
void BM_IngotDecodeQwen3_0_6B(benchmark::State& state) {
  decode_steps(state, setup().artifact->program);
  state.counters["onnx_export_s"] = setup().export_seconds;
}
BENCHMARK(BM_IngotDecodeQwen3_0_6B)->Unit(benchmark::kMillisecond)->Iterations(16)->UseRealTime();

// The native exporter's decode graph of the same model (fused rms_norm, room check kept).
void BM_IngotNativeDecodeQwen3_0_6B(benchmark::State& state) {
  decode_steps(state, setup().native->program);
}
BENCHMARK(BM_IngotNativeDecodeQwen3_0_6B)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(16)
    ->UseRealTime();

void BM_OrtDecodeQwen3_0_6B(benchmark::State& state) {
  DecodeSetup& s = setup();
  const char* venv = std::getenv("INGOT_ONNX_VENV");
  const char* home = std::getenv("HOME");
  const fs::path python =
      (venv ? fs::path(venv) : fs::path(home ? home : "/") / ".cache/ingot/onnx-venv") / "bin" /
      "python";
  if (!fs::exists(python)) {
    state.SkipWithError("no ONNX venv (tools/onnx/setup-venv)");
    return;
  }
  const fs::path script =
      fs::path(__FILE__).parent_path() / ".." / "tools" / "onnx" / "decode_loop.py";
  const std::string cmd = "'" + python.string() + "' '" + script.string() + "' '" +
                          (s.dir / "decode.onnx").string() + "' --prompt '" +
                          (s.dir / "prompt.npy").string() + "' --steps 1 --bench-steps 16";
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
  state.counters["ort_tokens_per_s"] = result["decode_tokens_per_s"].get<double>();
  state.SetLabel("onnxruntime " + result.value("onnxruntime", std::string("?")) +
                 " (python, IO binding)");
}
BENCHMARK(BM_OrtDecodeQwen3_0_6B)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace
