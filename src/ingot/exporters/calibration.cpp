#include "ingot/exporters/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/export/passes.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/exporters/quantize.h"
#include "ingot/exporters/quantizers/linear_weights.h"
#include "ingot/exporters/tool_versions.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"
#include "ingot/runtime/executor/program_module.h"
#include "ingot/text/chat_template.h"
#include "ingot/text/tokenizer.h"

namespace ingot::exporters {

const ActivationStats* CalibrationStats::of(const std::string& name) const {
  auto it = by_weight.find(name);
  return it == by_weight.end() ? nullptr : it->second.get();
}

const PackedWeight* CalibrationStats::packed_of(const std::string& name) const {
  auto it = packed.find(name);
  return it == packed.end() ? nullptr : &it->second;
}

// --- the calibration set ----------------------------------------------------------------

namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  INGOT_CHECK(f.good(), ValueError,
              "[calibration] cannot read the dataset '{}' (give a text or JSONL file)", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool is_jsonl(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

}  // namespace

CalibrationSet read_calibration_set(const std::string& path, const std::string& model_folder,
                                    int64_t num_samples, int64_t seq_len) {
  INGOT_CHECK(num_samples >= 1 && seq_len >= 2, ValueError,
              "[calibration] num_samples must be >= 1 and seq_len >= 2 (got {} and {})",
              num_samples, seq_len);
  const std::string text = read_text(path);
  INGOT_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, ValueError,
              "[calibration] the dataset '{}' is empty", path);
  INGOT_CHECK(!model_folder.empty(), ValueError,
              "[calibration] the dataset '{}' needs the model's tokenizer: load the model from "
              "its folder (from_pretrained) or pass the folder",
              path);
  const text::Tokenizer tokenizer = text::Tokenizer::from_folder(model_folder);
  CalibrationSet set;
  set.source = path;
  auto add = [&](std::vector<int64_t> ids) {
    if (ids.size() > size_t(seq_len)) ids.resize(size_t(seq_len));
    if (ids.size() >= 2 && int64_t(set.samples.size()) < num_samples)
      set.samples.push_back(std::move(ids));
  };
  if (!is_jsonl(text)) {
    // Plain text: tokenised whole, cut into consecutive samples of seq_len tokens.
    const std::vector<int64_t> ids = tokenizer.encode(text, /*add_special_tokens=*/false);
    for (size_t at = 0; at < ids.size(); at += size_t(seq_len))
      add({ids.begin() + long(at), ids.begin() + long(std::min(ids.size(), at + size_t(seq_len)))});
  } else {
    std::optional<text::ChatTemplate> chat;
    std::istringstream lines(text);
    std::string line;
    for (int line_no = 1; std::getline(lines, line); ++line_no) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = fmt::format("{}:{}", path, line_no);
      nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      INGOT_CHECK(j.is_object() && (j.contains("text") || j.contains("messages")), ValueError,
                  "[calibration] {}: each line is a JSON object with \"text\" (a string) or "
                  "\"messages\" (a list of {{\"role\", \"content\"}})",
                  where);
      if (j.contains("text")) {
        INGOT_CHECK(j["text"].is_string(), ValueError, "[calibration] {}: \"text\" is not a string",
                    where);
        add(tokenizer.encode(j["text"].get<std::string>(), /*add_special_tokens=*/true));
      } else {
        if (!chat) chat = text::ChatTemplate::from_folder(model_folder);
        const std::string prompt =
            chat->render_values(text::ChatTemplate::messages_from_json(j["messages"].dump(), where),
                                /*add_generation_prompt=*/false);
        add(tokenizer.encode(prompt, /*add_special_tokens=*/false));
      }
      if (int64_t(set.samples.size()) == num_samples) break;
    }
  }
  INGOT_CHECK(!set.samples.empty(), ValueError,
              "[calibration] the dataset '{}' gave no sample of at least 2 tokens", path);
  if (int64_t(set.samples.size()) < std::min<int64_t>(num_samples, 32))
    warn(fmt::format("[calibration] warning: '{}' gave {} samples of the {} asked for; few "
                     "samples make noisy statistics (give a longer text or more lines)",
                     path, set.samples.size(), num_samples));
  return set;
}

// --- running the model ------------------------------------------------------------------

namespace {

// The activations the rewritten program outputs, and the weights each one feeds.
struct ObservedInput {
  ir::ValueId value = -1;
  int64_t k = 0;                     // its channels
  std::vector<std::string> weights;
  std::vector<bool> transposed;      // per weight: stored [in, out] (Conv1D)
};

using WeightFilter = std::function<bool(const std::string&)>;

// Makes the input of every linear whose weight is a parameter (and passes `observe`) a
// user output (replacing the model's own outputs; buffer mutations stay first), and drops
// what no output needs (the lm_head's product itself; the layers after the last observed).
std::vector<ObservedInput> observe_linear_inputs(ExportedProgram& program,
                                                 const WeightFilter& observe) {
  ir::Graph& g = *program.graph;
  const quant::LinearWeights weights(program);
  std::vector<ObservedInput> observed;
  std::map<ir::ValueId, size_t> index;
  for (const ir::Node& n : g.nodes()) {
    if (n.target != "linear") continue;
    const quant::LinearWeight w = weights.of(n);
    if (w.target.empty() || !observe(w.target)) continue;
    const ir::ValueId x = std::get<ir::TensorRef>(n.args[0]).id;
    auto [it, inserted] = index.emplace(x, observed.size());
    if (inserted) {
      const ir::SymShape& sizes = g.value(x).sizes;
      observed.push_back({x, sizes.back().value(), {}, {}});
    }
    observed[it->second].weights.push_back(w.target);
    observed[it->second].transposed.push_back(w.transposed);
  }
  std::vector<ir::ValueId> outputs;
  std::vector<OutputSpec> specs;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (program.signature.outputs[i].kind == OutputKind::UserOutput) continue;
    outputs.push_back(g.outputs[i]);
    specs.push_back(program.signature.outputs[i]);
  }
  TreeSpec out_spec;
  out_spec.type = "tuple";
  for (const ObservedInput& o : observed) {
    outputs.push_back(o.value);
    specs.push_back({OutputKind::UserOutput, g.value(o.value).name, ""});
    TreeSpec leaf;
    leaf.type = "tensor";
    out_spec.children.push_back(leaf);
  }
  g.outputs = std::move(outputs);
  program.signature.outputs = std::move(specs);
  program.out_spec = std::move(out_spec);
  eliminate_dead_code(program);
  return observed;
}

// Adds x [..., k] (any float dtype) into `s`: the channels' squares and, with a Hessian,
// x^T x.
void accumulate(const Tensor& x, ActivationStats& s, CalibrationNeed need) {
  const int64_t k = x.size(x.dim() - 1);
  const Tensor flat = contiguous(to(reshape(x, {-1, k}), DType::F32));  // [tokens, k]
  const int64_t tokens = flat.size(0);
  if (s.k == 0) {
    s.k = k;
    s.mean_square.assign(size_t(k), 0.0f);
    if (need == CalibrationNeed::Hessian) s.hessian.assign(size_t(k * k), 0.0f);
  }
  const float* p = flat.data<float>();
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < k; ++c) s.mean_square[size_t(c)] += p[t * k + c] * p[t * k + c];
  if (need == CalibrationNeed::Hessian) {
    const Tensor h = contiguous(mm(transpose(flat, 0, 1), flat));  // [k, k]
    const float* hp = h.data<float>();
    for (int64_t i = 0; i < k * k; ++i) s.hessian[size_t(i)] += hp[i];
  }
  s.tokens += tokens;
}

}  // namespace

namespace {

// The forward over input_ids, the token count symbolic up to the longest sample, through
// the native stages (the fixes every export gets).
ExportedProgram trace_forward(models::PretrainedModel& model, const CalibrationSet& set) {
  size_t longest = 0;
  for (const auto& s : set.samples) longest = std::max(longest, s.size());
  NativeExportConfig config;
  config.dynamic = true;
  config.max_seq = std::max<int64_t>(int64_t(longest), config.example_seq);
  return NativeExporter().export_(model, config)->program;
}

// One pass over the samples: the forward (with `replaced` parameters: target -> tensor)
// observing the linears `observe` accepts; their statistics go into `stats`.
void run_pass(models::PretrainedModel& model, const CalibrationSet& set,
              const std::map<std::string, Tensor>& replaced, const WeightFilter& observe,
              CalibrationNeed need, CalibrationStats& stats) {
  ExportedProgram program = trace_forward(model, set);
  for (const auto& [target, t] : replaced) program.state.at(target) = t;
  const std::vector<ObservedInput> observed = observe_linear_inputs(program, observe);
  if (observed.empty()) return;
  runtime::ProgramModule module(program);
  std::vector<std::shared_ptr<ActivationStats>> per_output;
  for (const ObservedInput& o : observed) {
    auto s = std::make_shared<ActivationStats>();
    for (const std::string& w : o.weights) stats.by_weight[w] = s;
    per_output.push_back(std::move(s));
  }
  for (const std::vector<int64_t>& sample : set.samples) {
    const int64_t len = int64_t(sample.size());
    models::ModelInputs in = example_model_inputs(model, 1, len);
    in.input_ids = Tensor::from_vector<int64_t>(sample, {1, len});
    const std::vector<Tensor> outputs = module(in);  // the observed inputs, in order
    for (size_t i = 0; i < per_output.size(); ++i) accumulate(outputs[i], *per_output[i], need);
  }
  for (auto& s : per_output) {
    if (s->tokens == 0) continue;
    const float inv = 1.0f / float(s->tokens);
    for (float& v : s->mean_square) v *= inv;
    for (float& v : s->hessian) v *= inv;
  }
}

std::shared_ptr<CalibrationStats> empty_stats(const CalibrationSet& set) {
  INGOT_CHECK(!set.samples.empty(), ValueError, "[calibration] '{}' has no samples", set.source);
  auto stats = std::make_shared<CalibrationStats>();
  stats->samples = int64_t(set.samples.size());
  for (const auto& s : set.samples) stats->tokens += int64_t(s.size());
  return stats;
}

}  // namespace

std::shared_ptr<const CalibrationStats> calibrate(models::PretrainedModel& model,
                                                  const CalibrationSet& set, CalibrationNeed need) {
  std::shared_ptr<CalibrationStats> stats = empty_stats(set);
  run_pass(model, set, {}, [](const std::string&) { return true; }, need, *stats);
  return stats;
}

std::shared_ptr<const CalibrationStats> calibrate_sequential(models::PretrainedModel& model,
                                                             const CalibrationSet& set,
                                                             const QuantizerConfig& quantizer,
                                                             int64_t hessian_budget_bytes) {
  std::shared_ptr<CalibrationStats> stats = empty_stats(set);
  // The chunks: consecutive layers whose inputs' Hessians fit the budget (at least one
  // layer each), then the weights outside the layer stack.
  ExportedProgram plan = trace_forward(model, set);
  const std::vector<ObservedInput> all =
      observe_linear_inputs(plan, [](const std::string&) { return true; });
  std::map<int, int64_t> hessian_bytes;          // layer -> bytes (-1: outside the stack)
  std::map<std::string, bool> transposed;        // weight -> stored [in, out]
  for (const ObservedInput& o : all) {
    hessian_bytes[quant::layer_of(o.weights.front())] += o.k * o.k * int64_t(sizeof(float));
    for (size_t i = 0; i < o.weights.size(); ++i) transposed[o.weights[i]] = o.transposed[i];
  }
  std::vector<std::set<int>> chunks;
  int64_t in_chunk = 0;
  for (const auto& [layer, bytes] : hessian_bytes) {
    if (layer < 0) continue;
    if (chunks.empty() || in_chunk + bytes > hessian_budget_bytes) {
      chunks.emplace_back();
      in_chunk = 0;
    }
    chunks.back().insert(layer);
    in_chunk += bytes;
  }
  if (hessian_bytes.contains(-1)) chunks.push_back({-1});

  const std::map<std::string, Tensor> model_state = model.state_dict();
  std::map<std::string, Tensor> replaced;  // quantised weights, dequantised, as the model stores them
  for (const std::set<int>& chunk : chunks) {
    const WeightFilter in = [&chunk](const std::string& w) {
      return chunk.contains(quant::layer_of(w));
    };
    run_pass(model, set, replaced, in, CalibrationNeed::Hessian, *stats);
    // Quantise the chunk on its statistics (the quantize stage's decisions), keep the grids.
    ExportedProgram scratch = trace_forward(model, set);
    std::set<std::string> weights;
    for (const auto& [w, s] : stats->by_weight)
      if (in(w)) weights.insert(w);
    const QuantizeResult result =
        quantize_program(scratch, quantizer, "native", stats.get(), &weights);
    for (const WeightReport& r : result.weights) {
      if (r.bits == 0) continue;  // kept float by the stage's rules
      const std::string& w = r.name;
      const std::string base = w.ends_with(".weight") ? w.substr(0, w.size() - 7) : w;
      PackedWeight p;
      p.bits = r.bits;
      p.group = r.group;
      p.qweight = scratch.state.at(base + ".qweight");
      p.scales = scratch.state.at(base + ".scales");
      if (auto z = scratch.state.find(base + ".qzeros"); z != scratch.state.end()) p.zeros = z->second;
      const Tensor& original = model_state.at(w);
      Tensor deq = dequantize_weight(p.qweight, p.scales, p.zeros, p.bits, p.group);  // [n, k]
      if (transposed.at(w)) deq = transpose(deq, 0, 1);
      replaced[w] = contiguous(to(deq, original.dtype()));
      stats->packed[w] = std::move(p);
    }
    // The chunk's Hessians are spent.
    for (const auto& [w, s] : stats->by_weight) {
      if (!in(w)) continue;
      s->hessian.clear();
      s->hessian.shrink_to_fit();
    }
  }
  return stats;
}

std::shared_ptr<const CalibrationStats> calibrate_for(models::PretrainedModel& model,
                                                      const QuantizerConfig& quantizer,
                                                      const std::string& model_folder) {
  if (!quantizer.enabled() || quantizer.dataset.empty()) return nullptr;
  // A GGUF file type's k-quant search weighs each input channel by its importance.
  const CalibrationNeed need = quantizer.gguf_file_type()
                                   ? CalibrationNeed::Importance
                                   : make_quantizer(quantizer, "native")->calibration();
  if (need == CalibrationNeed::Hessian) {
    INGOT_CHECK(quantizer.ratio == 1.0, NotSupportedError,
                "[calibration] method '{}' with ratio {}: the ratio's choice needs every layer's "
                "statistics before GPTQ's sequential calibration; use scale-search with ratio",
                quantizer.method, quantizer.ratio);
  }
  if (need == CalibrationNeed::None) {
    warn(fmt::format("[calibration] warning: method '{}' does not calibrate; dataset '{}' is "
                     "not read",
                     quantizer.method, quantizer.dataset));
    return nullptr;
  }
  const CalibrationSet set =
      read_calibration_set(quantizer.dataset, model_folder, quantizer.num_samples, quantizer.seq_len);
  if (need == CalibrationNeed::Hessian)
    return calibrate_sequential(model, set, quantizer, kGptqHessianBudget);
  return calibrate(model, set, need);
}

}  // namespace ingot::exporters
