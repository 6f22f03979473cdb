// The ExecuTorch exporter on a Qwen3-0.6B-shaped model (28 layers, synthetic weights,
// float32 compute), side by side in one run (`ingot_bench --benchmark_filter=Executorch
// --benchmark_format=json`):
//  * BM_ExecutorchExportQwen3_0_6B: export_for_generation's decode component (seed 003's
//    in-place layout: alloc_graph_input / alloc_graph_output / alloc_mutable_buffers
//    false) through the ExecuTorch exporter, and the .pte write: export_ms, save_ms, the
//    peak RSS growth of both against the weights' size (the weights are streamed from
//    their tensors into the file once, never copied in memory), the .pte size;
//  * BM_ExecutorchDecodeSideBySideQwen3_0_6B: decode tokens/s, one token per step after an
//    8-token prompt (batch 1, 128 cache slots), interleaved rounds, best of each:
//      ingot_tokens_per_s: ingot's runtime on the program the .pte was emitted from (the
//        StaticCache written in place);
//      executorch_cpp_tokens_per_s: ExecuTorch's C++ runtime from the wheel
//        (tools/executorch/decode_inplace.cpp: seed 003's loop, the cache bound in place
//        with set_output_data_ptr; the wheel's CPU kernel library, optimized kernels where
//        it has them, portable otherwise), program load and prompt excluded;
//      executorch_python_tokens_per_s: ExecuTorch's Python runtime (portable_lib,
//        tools/executorch/decode_loop.py --bench-steps), the cache handed from outputs to
//        inputs;
//      executorch_xnnpack_cpp_tokens_per_s: the same C++ loop on the backend="xnnpack"
//        export (linear / matmul in XNNPACK delegates);
//    skipped (with the reason) without the reference venv.
// transformers' own ExecutorchExporter does not import in the reference venv (it needs
// torchao, which the venv does not pin), so it is not in this table.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../tests/exporters/et_cpp_judge.h"
#include "bench_model.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace {

namespace fs = std::filesystem;
namespace et = ingot::testing::et;
constexpr int64_t kMaxCacheLen = 128;
constexpr int64_t kPromptLen = 8;
constexpr int kDecodeSteps = 16;  // timed single-token steps per round
constexpr int kRounds = 3;

struct EtSetup {
  std::shared_ptr<ingot::models::PretrainedModel> model;
  std::unique_ptr<ingot::exporters::ExportArtifact> decode;
  fs::path dir;
  double export_s = 0, save_s = 0, rss_growth_mib = 0, pte_mib = 0, weights_mib = 0;
};

double mib(int64_t kb) {
  return double(kb) / 1024.0;
}

std::shared_ptr<ingot::models::PretrainedModel> bench_model() {
  static auto model = ingot::models::from_pretrained(ingot::bench::synthetic_qwen3_checkpoint().first);
  return model;
}

// The export of one backend ("portable" or "xnnpack") and the files the loops read.
EtSetup export_setup(const std::string& backend) {
  {
    EtSetup d;
    d.model = bench_model();
    for (const auto& p : d.model->named_parameters()) d.weights_mib += double(p.slot->value.nbytes());
    d.weights_mib /= 1024.0 * 1024.0;
    ingot::bench::reset_peak_rss();
    const int64_t rss_before = ingot::bench::status_kb("VmRSS:");
    ingot::exporters::ExecutorchConfig c;
    c.alloc_graph_input = c.alloc_graph_output = c.alloc_mutable_buffers = false;
    c.backend = backend;
    ingot::exporters::GenerationExportOptions g;
    g.max_cache_len = kMaxCacheLen;
    auto t0 = std::chrono::steady_clock::now();
    d.decode = std::move(
        ingot::exporters::ExecutorchExporter().export_for_generation(*d.model, c, g).at("decode"));
    auto t1 = std::chrono::steady_clock::now();
    d.dir = fs::temp_directory_path() / ("ingot_qwen3_0.6b_decode_executorch_" + backend);
    fs::create_directories(d.dir);
    d.decode->save((d.dir / "decode.pte").string());
    auto t2 = std::chrono::steady_clock::now();
    d.rss_growth_mib = mib(ingot::bench::status_kb("VmHWM:") - rss_before);
    d.export_s = std::chrono::duration<double>(t1 - t0).count();
    d.save_s = std::chrono::duration<double>(t2 - t1).count();
    d.pte_mib = double(fs::file_size(d.dir / "decode.pte")) / (1024.0 * 1024.0);

    // What the two ExecuTorch loops read: names, prompt, the empty cache (.npy for the
    // Python loop, raw bytes for the C++ one).
    auto& p = dynamic_cast<ingot::exporters::ExecutorchProgram&>(*d.decode);
    std::vector<int64_t> prompt(kPromptLen);
    for (int64_t i = 0; i < kPromptLen; ++i) prompt[size_t(i)] = 100 + i;
    ingot::formats::save_npy((d.dir / "prompt.npy").string(),
                             ingot::Tensor::from_vector(prompt, {1, kPromptLen}));
    nlohmann::json io{{"inputs", p.input_names},   {"outputs", p.output_names},
                      {"prompt", "prompt.npy"},    {"prompt_ids", prompt},
                      {"initial", nlohmann::json::object()}};
    nlohmann::json raw = io;
    ingot::nn::StaticCache cache(*d.model->cache_spec(), 1, kMaxCacheLen);
    for (const auto& [name, t] : cache.named_tensors()) {
      ingot::Tensor ct = ingot::contiguous(t);
      ingot::formats::save_npy((d.dir / (name + ".npy")).string(), ct);
      std::ofstream(d.dir / (name + ".bin"), std::ios::binary)
          .write(static_cast<const char*>(ct.raw_data()), std::streamsize(ct.nbytes()));
      io["initial"][name] = name + ".npy";
      raw["initial"][name] = name + ".bin";
    }
    std::ofstream(d.dir / "io.json") << io.dump();
    std::ofstream(d.dir / "io_raw.json") << raw.dump();
    return d;
  }
}

EtSetup& setup() {
  static EtSetup s = export_setup("portable");
  return s;
}
EtSetup& xnnpack_setup() {
  static EtSetup s = export_setup("xnnpack");
  return s;
}

void report_export(benchmark::State& state, const EtSetup& s) {
  for (auto _ : state) {
  }
  state.counters["export_ms"] = s.export_s * 1e3;
  state.counters["save_pte_ms"] = s.save_s * 1e3;
  state.counters["peak_rss_growth_mib"] = s.rss_growth_mib;
  state.counters["weights_mib"] = s.weights_mib;
  state.counters["rss_growth_per_weights"] = s.rss_growth_mib / s.weights_mib;
  state.counters["pte_mib"] = s.pte_mib;
}

void BM_ExecutorchExportQwen3_0_6B(benchmark::State& state) {
  report_export(state, setup());
}
BENCHMARK(BM_ExecutorchExportQwen3_0_6B)->Iterations(1)->Unit(benchmark::kMillisecond);

// The XNNPACK delegate's payloads own their weights (copied once into them, in memory,
// before the write), so the RSS growth is about one weights' size here.
void BM_ExecutorchXnnpackExportQwen3_0_6B(benchmark::State& state) {
  report_export(state, xnnpack_setup());
}
BENCHMARK(BM_ExecutorchXnnpackExportQwen3_0_6B)->Iterations(1)->Unit(benchmark::kMillisecond);

// ingot's runtime: the prompt, then kDecodeSteps single tokens timed. The mask / positions
// are built per step like a caller of seed 003's layout does.
double ingot_decode_tokens_per_s(EtSetup& s, ingot::runtime::ProgramModule& mod) {
  ingot::nn::StaticCache cache(*s.model->cache_spec(), 1, kMaxCacheLen);
  auto step = [&](const ingot::Tensor& ids, int64_t position) {
    const int64_t q = ids.size(1);
    ingot::Tensor pos = ingot::arange(position, position + q, 1, ingot::DType::I64);
    ingot::Tensor slots = ingot::reshape(ingot::arange(kMaxCacheLen, ingot::DType::I64),
                                         {1, kMaxCacheLen});
    ingot::Tensor mask = ingot::contiguous(ingot::reshape(
        ingot::le(slots, ingot::unsqueeze(pos, 1)), {1, 1, q, kMaxCacheLen}));
    return mod(ids, mask, ingot::unsqueeze(pos, 0), cache).at(0);
  };
  ingot::Tensor prompt = ingot::formats::load_npy((s.dir / "prompt.npy").string());
  step(prompt, 0);
  ingot::Tensor token = ingot::zeros({1, 1}, ingot::DType::I64);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kDecodeSteps; ++i) benchmark::DoNotOptimize(step(token, kPromptLen + i));
  return kDecodeSteps /
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One run of a judge; its "decode_tokens_per_s" or the reason it gave none.
double judge_tokens_per_s(const std::string& cmd, std::string& why) {
  et::ToolResult r = et::run_command(cmd);
  if (r.status != 0 || !r.summary.is_object() || !r.summary["decode_tokens_per_s"].is_number()) {
    why = "exit " + std::to_string(r.status) + ": " + r.log.substr(0, 2000);
    return 0;
  }
  return r.summary["decode_tokens_per_s"].get<double>();
}

void BM_ExecutorchDecodeSideBySideQwen3_0_6B(benchmark::State& state) {
  EtSetup& s = setup();
  if (!fs::exists(et::venv_python())) {
    state.SkipWithError("no reference venv (tools/reference/setup-venv)");
    return;
  }
  // __FILE__ is relative to the build directory (the binary's parent's parent).
  fs::path root = fs::path(__FILE__).parent_path() / "..";
  if (root.is_relative())
    root = fs::canonical("/proc/self/exe").parent_path().parent_path() / root;
  std::string log;
  const fs::path judge = et::build_cpp_judge(root, "decode_inplace", log);
  if (judge.empty()) {
    state.SkipWithError(("no C++ ExecuTorch judge: " + log).c_str());
    return;
  }
  auto cpp_command = [&](const EtSetup& e) {
    return "'" + judge.string() + "' '" + (e.dir / "decode.pte").string() + "' '" +
           (e.dir / "io_raw.json").string() + "' 1 '" + (e.dir / "logits.f32").string() + "' " +
           std::to_string(kDecodeSteps);
  };
  const std::string pte = (s.dir / "decode.pte").string();
  const std::string cpp_cmd = cpp_command(s);
  const std::string xnn_cmd = cpp_command(xnnpack_setup());
  const std::string py_cmd = "'" + et::venv_python().string() + "' '" +
                             (root / "tools/executorch/decode_loop.py").string() + "' '" + pte +
                             "' --io '" + (s.dir / "io.json").string() +
                             "' --steps 1 --bench-steps " + std::to_string(kDecodeSteps);
  auto mod = ingot::runtime::ProgramModule(s.decode->program);
  double ingot_best = 0, cpp_best = 0, py_best = 0, xnn_best = 0;
  for (auto _ : state) {
    for (int round = 0; round < kRounds; ++round) {  // interleaved: the machine is noisy
      ingot_best = std::max(ingot_best, ingot_decode_tokens_per_s(s, mod));
      std::string why;
      cpp_best = std::max(cpp_best, judge_tokens_per_s(cpp_cmd, why));
      if (!why.empty()) {
        state.SkipWithError(("decode_inplace failed: " + why).c_str());
        return;
      }
      py_best = std::max(py_best, judge_tokens_per_s(py_cmd, why));
      if (!why.empty()) {
        state.SkipWithError(("decode_loop.py failed: " + why).c_str());
        return;
      }
      xnn_best = std::max(xnn_best, judge_tokens_per_s(xnn_cmd, why));
      if (!why.empty()) {
        state.SkipWithError(("decode_inplace (xnnpack) failed: " + why).c_str());
        return;
      }
    }
  }
  state.counters["ingot_tokens_per_s"] = ingot_best;
  state.counters["executorch_cpp_tokens_per_s"] = cpp_best;
  state.counters["executorch_python_tokens_per_s"] = py_best;
  state.counters["executorch_xnnpack_cpp_tokens_per_s"] = xnn_best;
  state.counters["ingot_over_executorch_cpp"] = ingot_best / cpp_best;
  state.counters["ingot_over_executorch_xnnpack"] = ingot_best / xnn_best;
  state.SetLabel("best of " + std::to_string(kRounds) + " interleaved rounds of " +
                 std::to_string(kDecodeSteps) + " steps");
}
BENCHMARK(BM_ExecutorchDecodeSideBySideQwen3_0_6B)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
