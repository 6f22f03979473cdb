#include "ingot/exporters/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/export/passes.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/exporters/quantizers/linear_weights.h"
#include "ingot/exporters/tool_versions.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"
#include "ingot/text/chat_template.h"
#include "ingot/text/tokenizer.h"

namespace ingot::exporters {

const ActivationStats* CalibrationStats::of(const std::string& name) const {
  auto it = by_weight.find(name);
  return it == by_weight.end() ? nullptr : it->second.get();
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
  std::vector<std::string> weights;
};

// Makes the input of every linear whose weight is a parameter a user output (replacing
// the model's own outputs; buffer mutations stay first), and drops what no output needs
// (the lm_head's product itself).
std::vector<ObservedInput> observe_linear_inputs(ExportedProgram& program) {
  ir::Graph& g = *program.graph;
  const quant::LinearWeights weights(program);
  std::vector<ObservedInput> observed;
  std::map<ir::ValueId, size_t> index;
  for (const ir::Node& n : g.nodes()) {
    if (n.target != "linear") continue;
    const quant::LinearWeight w = weights.of(n);
    if (w.target.empty()) continue;
    const ir::ValueId x = std::get<ir::TensorRef>(n.args[0]).id;
    auto [it, inserted] = index.emplace(x, observed.size());
    if (inserted) observed.push_back({x, {}});
    observed[it->second].weights.push_back(w.target);
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

std::shared_ptr<const CalibrationStats> calibrate(models::PretrainedModel& model,
                                                  const CalibrationSet& set, CalibrationNeed need) {
  INGOT_CHECK(!set.samples.empty(), ValueError, "[calibration] '{}' has no samples", set.source);
  size_t longest = 0;
  for (const auto& s : set.samples) longest = std::max(longest, s.size());
  // The forward over input_ids, token count symbolic, through the native stages.
  NativeExportConfig config;
  config.dynamic = true;
  config.max_seq = std::max<int64_t>(int64_t(longest), config.example_seq);
  ExportedProgram program = NativeExporter().export_(model, config)->program;
  const std::vector<ObservedInput> observed = observe_linear_inputs(program);
  runtime::ProgramModule module(program);

  auto stats = std::make_shared<CalibrationStats>();
  std::vector<std::shared_ptr<ActivationStats>> per_output;
  for (const ObservedInput& o : observed) {
    auto s = std::make_shared<ActivationStats>();
    for (const std::string& w : o.weights) stats->by_weight[w] = s;
    per_output.push_back(std::move(s));
  }
  for (const std::vector<int64_t>& sample : set.samples) {
    const int64_t len = int64_t(sample.size());
    models::ModelInputs in = example_model_inputs(model, 1, len);
    in.input_ids = Tensor::from_vector<int64_t>(sample, {1, len});
    const std::vector<Tensor> outputs = module(in);  // the observed inputs, in order
    for (size_t i = 0; i < per_output.size(); ++i) accumulate(outputs[i], *per_output[i], need);
    ++stats->samples;
    stats->tokens += len;
  }
  for (auto& s : per_output) {
    if (s->tokens == 0) continue;
    const float inv = 1.0f / float(s->tokens);
    for (float& v : s->mean_square) v *= inv;
    for (float& v : s->hessian) v *= inv;
  }
  return stats;
}

std::shared_ptr<const CalibrationStats> calibrate_for(models::PretrainedModel& model,
                                                      const QuantizerConfig& quantizer,
                                                      const std::string& model_folder) {
  if (!quantizer.enabled() || quantizer.dataset.empty()) return nullptr;
  const CalibrationNeed need = make_quantizer(quantizer, "native")->calibration();
  if (need == CalibrationNeed::None) {
    warn(fmt::format("[calibration] warning: method '{}' does not calibrate; dataset '{}' is "
                     "not read",
                     quantizer.method, quantizer.dataset));
    return nullptr;
  }
  const CalibrationSet set =
      read_calibration_set(quantizer.dataset, model_folder, quantizer.num_samples, quantizer.seq_len);
  return calibrate(model, set, need);
}

}  // namespace ingot::exporters
