// ingot's side of the side-by-side benchmark (tools/bench/side_by_side): one process that
// loads a model once and answers timing commands read from stdin, one JSON line per
// command, so the Python harness can interleave ingot and llama.cpp measurements.
//
//   ingot_side_by_side write-checkpoint DIR [SEED]   random Qwen3-0.6B-shaped bf16 checkpoint
//   ingot_side_by_side serve DIR                     then, one per line on stdin (DIR: any
//                                                    Hugging Face decoder folder):
//     load DTYPE CACHE_LEN [act=ACT] [head=HEAD] [zero_point=1] [method=M] [dataset=FILE]
//          [samples=N] [seq_len=L] [preset=P] [act_order=1]
//                               DTYPE: f32 | bf16 (the compute dtype),
//                               or int8 | int4 (f32 compute, weights quantised by the
//                               export quantizer with what `ingot export --quantize`
//                               does by default: int8 per channel / int4 group 32, the
//                               lm_head int8 per channel); reply: "vocab" among others.
//                               ACT: int8 | float (the exact path); left out: the
//                               library's default (int8 per 32-block, as llama.cpp
//                               does; INGOT_QUANT_ACTIVATIONS), what users get. HEAD: the
//                               lm_head's form, int8 (the default) | float
//                               (keep_lm_head_float) | scheme (quantizer.lm_head);
//                               zero_point=1: int4 groups with zero points; method,
//                               dataset, samples, seq_len, preset, act_order: the
//                               quantizer's fields (`ingot export --method ... --dataset
//                               ... --num-samples ... --seq-len ... --preset ...`)
//     logits OUT.npy ID...      last-position float32 logits of a prompt -> OUT.npy
//     perplexity IDS.npy CHUNK  perplexity of the token ids in IDS.npy (int32 / int64),
//                               cut into windows of CHUNK tokens, each one prefill from
//                               an empty cache; every position but a window's first is
//                               scored: {"perplexity", "tokens"}
//     prefill TOKENS            one prefill of TOKENS tokens: {"tok_s", "seconds"}
//     decode PROMPT STEPS       prefill PROMPT tokens, then STEPS decode steps: {"tok_s"}
//     probe                     the machine's read bandwidth and FLOP peaks (machine_probe.h)
//     export-onnx OUT_DIR CACHE_LEN PROMPT [int8|int4]
//                                           ONNX decode graph (f32, or weights quantised as
//                                           `load` does: MatMulNBits) + prompt.npy for ORT
//     quit
// Errors are reported as {"error": "..."} and the process keeps serving.
#include <malloc.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../bench_model.h"
#include "../machine_probe.h"
#include "ingot/core/thread_pool.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/formats/npy.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"
#include "ingot/runtime/generator/generator.h"
#include "ingot/runtime/passes/pipeline.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A deterministic prompt of `n` token ids below `vocab` (the harness builds the same list).
std::vector<int64_t> prompt_of(int64_t n, int64_t vocab) {
  std::vector<int64_t> ids(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) ids[size_t(i)] = (i * 7919 + 13) % (vocab - 200) + 100;
  return ids;
}

// config.json's vocab_size (a decoder's folder).
int64_t vocab_size(const std::string& dir) {
  std::ifstream f(fs::path(dir) / "config.json");
  const auto config = nlohmann::json::parse(f);
  INGOT_CHECK(config.contains("vocab_size"), ingot::ValueError,
              "[side_by_side] {}/config.json has no vocab_size", dir);
  return config.at("vocab_size").get<int64_t>();
}

struct Session {
  std::string dir;
  std::shared_ptr<ingot::models::PretrainedModel> model;  // released after the export
  std::optional<ingot::nn::CacheSpec> cache_spec;
  ingot::runtime::GenerationPackage programs;
  std::unique_ptr<ingot::runtime::Generator> generator;
  int64_t cache_len = 0;
  int64_t vocab = 0;  // the loaded model's
};

nlohmann::json load(Session& s, const std::string& dtype, int64_t cache_len,
                    const std::string& act, const std::string& head,
                    const ingot::exporters::QuantizerConfig& quantizer) {
  const bool quantised = dtype == "int8" || dtype == "int4";
  INGOT_CHECK(dtype == "f32" || dtype == "bf16" || quantised, ingot::ValueError,
              "[side_by_side] load: dtype must be f32, bf16, int8 or int4, got '{}'", dtype);
  INGOT_CHECK(act.empty() || act == "int8" || act == "float", ingot::ValueError,
              "[side_by_side] load: activations must be int8 or float, got '{}'", act);
  INGOT_CHECK(head.empty() || head == "int8" || head == "float" || head == "scheme",
              ingot::ValueError,
              "[side_by_side] load: head must be int8, float or scheme, got '{}'", head);
  s.generator.reset();
  s.programs = {};
  s.model.reset();
  const auto t0 = Clock::now();
  s.model = ingot::models::from_pretrained(
      s.dir, {dtype == "bf16" ? ingot::DType::BF16 : ingot::DType::F32});
  ingot::exporters::GenerationExportOptions o;
  o.max_cache_len = cache_len;
  o.model_folder = s.dir;
  ingot::exporters::NativeExportConfig config;
  if (quantised) {
    config.quantizer = quantizer;  // the defaults, as `ingot export`, unless HEAD
    config.quantizer.scheme = dtype;
    config.quantizer.keep_lm_head_float = head == "float";
    config.quantizer.lm_head = head == "scheme";
  }
  // No ACT: the mode the process started with (an earlier load's ACT does not stick).
  static const ingot::cpu::QuantActivations initial = ingot::cpu::quant_activations();
  ingot::cpu::set_quant_activations(act.empty()     ? initial
                                    : act == "int8" ? ingot::cpu::QuantActivations::Int8
                                                    : ingot::cpu::QuantActivations::Float);
  s.programs =
      (ingot::exporters::NativeExporter().export_for_generation(*s.model, config, o)).package();
  // The driver keeps its programs (for `logits`), rewritten by the same load-time passes
  // as the Generator's (runtime/passes/pipeline.h; the environment's RuntimeOptions, so an
  // A/B switch such as INGOT_PACKED_WEIGHTS=0 reaches both) but the prefill's
  // last-position LM head (`logits` wants every position). The Generator's own pipeline
  // then finds the weights already moved and packed: the weights are in memory once.
  const ingot::runtime::RuntimeOptions options = ingot::runtime::RuntimeOptions::from_environment();
  ingot::runtime::RuntimeOptions every_position = options;
  every_position.disabled_passes.insert("last_position_logits");
  ingot::runtime::PassPipeline passes(every_position);
  for (auto& [name, program] : s.programs) program = passes.run(program, {name});
  s.generator = std::make_unique<ingot::runtime::Generator>(s.programs, std::nullopt, options);
  // `logits` runs these without their example inputs (a whole KV cache), as the
  // Generator does.
  for (auto& [name, program] : s.programs) program.example_inputs.clear();
  s.cache_len = cache_len;
  // The bytes a decode step streams: the program's parameters but a float embedding
  // table that a packed lm_head stands beside (one row of it is read per token).
  int64_t weight_bytes = 0, program_bytes = 0;
  for (const auto& [name, t] : s.programs.begin()->second.state) {
    program_bytes += int64_t(t.nbytes());
    if (!quantised || !ingot::is_floating(t.dtype()) ||
        name.find("embed_tokens") == std::string::npos)
      weight_bytes += int64_t(t.nbytes());
  }
  // The float model is not needed any more (the programs hold what they read).
  s.cache_spec = s.model->cache_spec();
  s.vocab = vocab_size(s.dir);
  s.model.reset();
#if defined(__GLIBC__)
  malloc_trim(0);  // return the freed float weights to the system (peak RSS below)
#endif
  // Warm-up: faults the weights in, builds the plans of the shapes timed later.
  ingot::runtime::GenerateOptions go;
  go.max_new_tokens = 4;
  s.generator->generate(prompt_of(16, s.vocab), go);
  return {{"load_s", seconds_since(t0)},
          {"vocab", s.vocab},
          {"weight_bytes", weight_bytes},
          {"program_bytes", program_bytes},
          {"rss_kb", ingot::bench::status_kb("VmRSS:")},
          {"threads", ingot::num_threads()}};
}

nlohmann::json logits(Session& s, const std::string& out, const std::vector<int64_t>& ids) {
  INGOT_CHECK(s.cache_spec, ingot::ValueError, "[side_by_side] logits before load");
  ingot::runtime::ProgramModule mod(s.programs.contains("prefill") ? s.programs.at("prefill")
                                                                   : s.programs.at("decode"));
  ingot::nn::StaticCache cache(*s.cache_spec, 1, s.cache_len);
  auto outs = mod(ingot::Tensor::from_vector(ids, {1, int64_t(ids.size())}), cache);
  std::vector<float> row;
  ingot::runtime::last_row(outs.at(0), row);
  outs.clear();
  ingot::formats::save_npy(out, ingot::Tensor::from_vector(row, {int64_t(row.size())}));
  return {{"vocab", row.size()}};
}

nlohmann::json perplexity(Session& s, const std::string& ids_file, int64_t chunk) {
  INGOT_CHECK(s.cache_spec, ingot::ValueError, "[side_by_side] perplexity before load");
  INGOT_CHECK(chunk >= 2 && chunk <= s.cache_len, ingot::ValueError,
              "[side_by_side] perplexity: CHUNK must be in [2, {}] (the cache), got {}",
              s.cache_len, chunk);
  const ingot::Tensor ids = ingot::to(ingot::formats::load_npy(ids_file), ingot::DType::I64);
  const int64_t* all = ids.data<int64_t>();
  ingot::runtime::ProgramModule mod(s.programs.contains("prefill") ? s.programs.at("prefill")
                                                                   : s.programs.at("decode"));
  double nll = 0;
  int64_t scored = 0;
  for (int64_t begin = 0; begin + chunk <= ids.numel(); begin += chunk) {
    std::vector<int64_t> window(all + begin, all + begin + chunk);
    ingot::nn::StaticCache cache(*s.cache_spec, 1, s.cache_len);
    auto outs = mod(ingot::Tensor::from_vector(window, {1, chunk}), cache);
    const ingot::Tensor logits = ingot::contiguous(ingot::to(outs.at(0), ingot::DType::F32));
    const int64_t vocab = logits.size(2);
    const float* row = logits.data<float>();
    for (int64_t t = 0; t + 1 < chunk; ++t, row += vocab) {  // position t predicts t + 1
      double max = row[0], sum = 0;
      for (int64_t v = 1; v < vocab; ++v) max = std::max<double>(max, row[v]);
      for (int64_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
      nll += std::log(sum) + max - row[window[size_t(t + 1)]];
      ++scored;
    }
  }
  INGOT_CHECK(scored > 0, ingot::ValueError,
              "[side_by_side] perplexity: {} holds {} ids, fewer than one window of {}",
              ids_file, ids.numel(), chunk);
  return {{"perplexity", std::exp(nll / double(scored))}, {"tokens", scored}};
}

nlohmann::json prefill(Session& s, int64_t tokens) {
  INGOT_CHECK(s.generator, ingot::ValueError, "[side_by_side] prefill before load");
  ingot::runtime::GenerateOptions go;
  go.max_new_tokens = 1;
  ingot::runtime::GenerationStats stats;
  s.generator->generate(prompt_of(tokens, s.vocab), go, &stats);
  return {{"tok_s", stats.prefill_tokens_per_second()}, {"seconds", stats.prefill_seconds}};
}

nlohmann::json decode(Session& s, int64_t prompt, int64_t steps) {
  INGOT_CHECK(s.generator, ingot::ValueError, "[side_by_side] decode before load");
  ingot::runtime::GenerateOptions go;
  go.max_new_tokens = steps + 1;  // the first new token comes from the prefill
  ingot::runtime::GenerationStats stats;
  ingot::bench::reset_peak_rss();
  s.generator->generate(prompt_of(prompt, s.vocab), go, &stats);
  return {{"tok_s", stats.decode_tokens_per_second()},
          {"steps", stats.new_tokens - 1},
          {"peak_rss_kb", ingot::bench::status_kb("VmHWM:")}};
}

nlohmann::json export_onnx(Session& s, const std::string& out, int64_t cache_len, int64_t prompt,
                           const std::string& scheme) {
  INGOT_CHECK(scheme.empty() || scheme == "int8" || scheme == "int4", ingot::ValueError,
              "[side_by_side] export-onnx: the scheme must be int8, int4 or absent, got '{}'",
              scheme);
  auto model = ingot::models::from_pretrained(s.dir);  // f32 compute
  ingot::exporters::OnnxConfig c;
  c.dynamic = true;
  c.external_data = "always";
  c.quantizer.scheme = scheme;  // as `load` quantises (MatMulNBits)
  ingot::exporters::GenerationExportOptions g;
  g.max_cache_len = cache_len;
  auto artifacts = ingot::exporters::OnnxExporter().export_for_generation(*model, c, g);
  fs::create_directories(out);
  artifacts.at("decode")->save((fs::path(out) / "decode.onnx").string());
  ingot::formats::save_npy((fs::path(out) / "prompt.npy").string(),
                           ingot::Tensor::from_vector(prompt_of(prompt, vocab_size(s.dir)), {1, prompt}));
  return {{"onnx", (fs::path(out) / "decode.onnx").string()}};
}

int serve(const std::string& dir) {
  Session s;
  s.dir = dir;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd.empty()) continue;
    if (cmd == "quit") break;
    nlohmann::json reply;
    try {
      if (cmd == "load") {
        std::string dtype, act, head;
        ingot::exporters::QuantizerConfig q;
        int64_t cache_len = 0;
        in >> dtype >> cache_len;
        for (std::string option; in >> option;) {
          const size_t eq = option.find('=');
          const std::string key = option.substr(0, eq);
          const std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
          if (key == "act")
            act = value;
          else if (key == "head")
            head = value;
          else if (option == "zero_point=1")
            q.zero_point = true;
          else if (key == "method")
            q.method = value;
          else if (key == "dataset")
            q.dataset = value;
          else if (key == "samples")
            q.num_samples = std::stoll(value);
          else if (key == "seq_len")
            q.seq_len = std::stoll(value);
          else if (key == "preset")
            q.preset = value;
          else if (option == "act_order=1")
            q.act_order = true;
          else
            throw ingot::ValueError("[side_by_side] load: unknown option '" + option +
                                    "' (act=, head=, zero_point=1, method=, dataset=, samples=, "
                                    "seq_len=, preset=, act_order=1)");
        }
        reply = load(s, dtype, cache_len, act, head, q);
      } else if (cmd == "logits") {
        std::string out;
        in >> out;
        std::vector<int64_t> ids;
        for (int64_t id; in >> id;) ids.push_back(id);
        reply = logits(s, out, ids);
      } else if (cmd == "perplexity") {
        std::string file;
        int64_t chunk = 0;
        in >> file >> chunk;
        reply = perplexity(s, file, chunk);
      } else if (cmd == "prefill") {
        int64_t n = 0;
        in >> n;
        reply = prefill(s, n);
      } else if (cmd == "decode") {
        int64_t prompt = 0, steps = 0;
        in >> prompt >> steps;
        reply = decode(s, prompt, steps);
      } else if (cmd == "probe") {
        const ingot::bench::ReadProbe r = ingot::bench::read_probe();
        const ingot::bench::FlopProbe f = ingot::bench::flop_probe();
        nlohmann::json by = nlohmann::json::object();
        for (const auto& [streams, gbs] : r.gbs_by_streams) by[std::to_string(streams)] = gbs;
        reply = {{"read_gbs", r.best_gbs},       {"read_best_streams", r.best_streams},
                 {"read_gbs_by_streams", by},    {"f32_gflops", f.f32_gflops},
                 {"bf16_gflops", f.bf16_gflops}, {"threads", ingot::num_threads()}};
      } else if (cmd == "export-onnx") {
        std::string out, scheme;
        int64_t cache_len = 0, prompt = 0;
        in >> out >> cache_len >> prompt >> scheme;
        reply = export_onnx(s, out, cache_len, prompt, scheme);
      } else {
        reply = {{"error", "unknown command '" + cmd + "'"}};
      }
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
    }
    std::cout << reply.dump() << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: ingot_side_by_side write-checkpoint DIR [SEED] | serve DIR (commands on stdin)";
  if (argc < 3) {
    std::fprintf(stderr, "%s\n", usage.c_str());
    return 2;
  }
  const std::string mode = argv[1];
  try {
    if (mode == "write-checkpoint") {
      const uint64_t seed = argc > 3 ? std::stoull(argv[3]) : 1;
      const size_t bytes = ingot::bench::write_random_qwen3_checkpoint(argv[2], seed);
      std::cout << nlohmann::json({{"dir", argv[2]}, {"bytes", bytes}}).dump() << std::endl;
      return 0;
    }
    if (mode == "serve") return serve(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ingot_side_by_side: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "%s\n", usage.c_str());
  return 2;
}
