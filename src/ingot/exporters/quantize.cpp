#include "ingot/exporters/quantize.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "ingot/core/error.h"
#include "ingot/export/passes.h"
#include "ingot/exporters/quantizer.h"
#include "ingot/exporters/quantizers/linear_weights.h"
#include "ingot/ir/rewrite.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

namespace {

// The packed parameters of one quantised weight (shared when several linears read it).
struct Packed {
  ir::ValueId q = -1, scales = -1, zeros = -1;
};

std::string base_name(const std::string& target) {
  const std::string suffix = ".weight";
  if (target.size() > suffix.size() && target.ends_with(suffix))
    return target.substr(0, target.size() - suffix.size());
  return target;
}

bool has_linear(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes()) {
    if (n.target == "linear") return true;
    for (const auto& s : n.subgraphs)
      if (has_linear(*s)) return true;
  }
  return false;
}

// llama.cpp's Q4_K_M keeps attn_v and ffn_down in more bits (Q6_K) in the first and last
// eighth of the layers and in every third layer between them.
bool q4_k_m_more_bits(int layer, int layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

class LinearRewriter {
 public:
  LinearRewriter(ExportedProgram& ep, const QuantizerConfig& c, const std::string& format,
                 const CalibrationStats* calibration, const std::set<std::string>* only)
      : ep_(ep), c_(c), weights_(ep), calibration_(calibration), only_(only),
        quantizer_(make_quantizer(c, format)) {
    for (const std::string& p : c.exclude) exclude_.emplace_back(p, std::regex::ECMAScript);
    for (const BitsRule& r : c.rules) rules_.emplace_back(std::regex(r.pattern), r.bits);
    ir::Graph& g = *ep.graph;
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (ep.signature.inputs[i].kind == InputKind::Parameter) last_param_ = i + 1;
    for (const ir::Node& n : g.nodes()) {
      if (n.target == "embedding")
        if (auto* t = std::get_if<ir::TensorRef>(&n.args[0])) embedding_weights_.insert(t->id);
    }
    for (const InputSpec& s : ep.signature.inputs)
      layers_ = std::max(layers_, quant::layer_of(s.target) + 1);
    INGOT_CHECK(quantizer_->calibration() != CalibrationNeed::Hessian || calibration_,
                ValueError,
                "[quantizer] method '{}' needs calibration: give quantizer.dataset (--dataset "
                "FILE), a text or JSONL file",
                c.method);
    // Weights the calibration forward does not reach get searched grids without importance.
    if (quantizer_->calibration() == CalibrationNeed::Hessian) {
      QuantizerConfig search = c;
      search.method = "scale-search";
      fallback_ = make_quantizer(search, format);
    }
  }

  QuantizeResult run() {
    if (c_.ratio < 1.0) choose_int8_by_sensitivity();
    ir::Graph& g = *ep_.graph;
    std::set<ir::ValueId> replaced;
    int quantised = 0;
    for (ir::Node& n : g.mutable_nodes()) {
      for (const auto& s : n.subgraphs) {
        if (has_linear(*s))
          kept(fmt::format("linear inside '{}' at {}: control-flow branches are not quantised",
                           n.target, n.source.str()));
      }
      if (n.target == "matmul" || n.target == "mm" || n.target == "bmm" || n.target == "addmm" ||
          n.target == "moe_experts") {
        kept(fmt::format("{} at {}: only linear layers are quantised", n.target, n.source.str()));
        continue;
      }
      if (n.target != "linear") continue;
      const quant::LinearWeight w = weights_.of(n);
      if (only_ && !only_->contains(w.target)) continue;
      const std::string why = reason_to_keep(w);
      if (!why.empty()) {
        kept(fmt::format("linear at {}: {}", n.source.str(), why));
        if (!w.target.empty() && !packed_.contains(w.value) && reported_.insert(w.value).second)
          weights_report_.push_back({w.target, 0, 0, false, "", why});
        continue;
      }
      const Packed& p = packed(w);
      ir::Argument bias = n.args.size() > 2 ? n.args[2] : ir::Argument{};
      const int64_t k = g.value(w.value).sizes[w.transposed ? 0 : 1].value();
      const int bits = bits_of(w);
      n.target = "ingot::quantized_linear";
      n.args = {n.args[0],
                ir::TensorRef{p.q},
                ir::TensorRef{p.scales},
                p.zeros >= 0 ? ir::Argument{ir::TensorRef{p.zeros}} : ir::Argument{},
                bias,
                sym::integer(bits),
                sym::integer(bits == 8 ? k : c_.group_size)};
      replaced.insert(w.value);
      ++quantised;
    }
    eliminate_dead_code(ep_);  // the transposes of quantised Conv1D weights
    drop_unused(replaced);
    return report(quantised);
  }

 private:
  QuantizeResult report(int quantised) {
    QuantizeResult result;
    result.weights = std::move(weights_report_);
    std::vector<std::string>& out = result.notes;
    out.push_back(fmt::format(
        "quantize {}: {} linear layers quantised ({} weights: {} int4, {} int8; {} kept in "
        "float; method {})",
        scheme_name(), quantised, packed_.size(), weights_in_bits_[4], weights_in_bits_[8],
        kept_.size(), c_.method));
    if (calibration_)
      out.push_back(fmt::format("quantize: calibrated on {} samples ({} tokens) of '{}'",
                                calibration_->samples, calibration_->tokens, c_.dataset));
    for (std::string& k : kept_) out.push_back("quantize: kept float: " + k);
    for (std::string& l : int8_heads_)
      out.push_back("quantize: " + l +
                    " as int8 per output channel (quantizer.keep_lm_head_float keeps it float)");
    if (!more_bits_.empty())
      out.push_back(fmt::format("quantize: int8 by rule, preset or ratio: {}", fmt::join(more_bits_, ", ")));
    if (!uncalibrated_.empty())
      out.push_back(fmt::format(
          "quantize: no calibration statistics (the calibration forward does not reach them): "
          "{} rounded by {} without importance",
          fmt::join(uncalibrated_, ", "), fallback_ ? fallback_->name() : quantizer_->name()));
    if (quantizer_->calibration() != CalibrationNeed::None && !calibration_)
      out.push_back(fmt::format("quantize: no calibration dataset: {} without importance",
                                c_.method));
    ep_.verify();
    return result;
  }

  std::string scheme_name() const {
    if (c_.bits() == 8) return "int8 (per output channel)";
    return fmt::format("int4 (group {}{})", c_.group_size, c_.zero_point ? ", zero points" : "");
  }

  void kept(std::string s) { kept_.push_back(std::move(s)); }

  bool is_lm_head(const quant::LinearWeight& w) const {
    return embedding_weights_.contains(w.value) || w.target.ends_with("lm_head.weight");
  }

  // The bits `w` is packed with: the lm_head's rule, the first matching rule, the preset,
  // else the scheme's; `why` says which.
  int bits_of(const quant::LinearWeight& w, std::string* why = nullptr) const {
    auto because = [&](int bits, std::string reason) {
      if (why) *why = std::move(reason);
      return bits;
    };
    if (is_lm_head(w))
      return because(c_.lm_head_bits(), c_.lm_head ? "the lm_head, with the scheme (quantizer.lm_head)"
                                                   : "the lm_head: int8 per channel by default");
    for (size_t i = 0; i < rules_.size(); ++i)
      if (std::regex_search(w.target, rules_[i].first))
        return because(rules_[i].second, fmt::format("rule '{}'", c_.rules[i].pattern));
    if (c_.preset == "q4_k_m" && c_.bits() == 4) {
      static const std::regex more(R"((v_proj|down_proj)\.weight$)");
      const int layer = quant::layer_of(w.target);
      if (layer >= 0 && std::regex_search(w.target, more) && q4_k_m_more_bits(layer, layers_))
        return because(8, fmt::format("preset q4_k_m: layer {} of {} keeps more bits", layer, layers_));
    }
    if (auto it = sensitive_.find(w.value); it != sensitive_.end())
      return because(8, fmt::format("ratio {}: among the most sensitive (mean weighted int4 "
                                    "error {:.3g})",
                                    c_.ratio, it->second));
    return because(c_.bits(), "the scheme");
  }

  // [n, k] f32, contiguous: the weight as the packed layout wants it.
  Tensor float_weight(const quant::LinearWeight& lw) const {
    Tensor w = to(ep_.state.at(lw.target), DType::F32);
    if (lw.transposed) w = transpose(w, 0, 1);
    return contiguous(w);
  }

  // quantizer.ratio < 1: the weights the scheme puts in int4, ranked by their int4
  // rounding error per parameter (each input channel weighted by its calibration
  // importance when there are statistics); the most sensitive go to int8 until int4
  // holds `ratio` of their parameters.
  void choose_int8_by_sensitivity() {
    struct Candidate {
      ir::ValueId value;
      double error;  // mean weighted squared error of round-to-nearest int4
      int64_t params;
    };
    std::vector<Candidate> candidates;
    int64_t total = 0;
    QuantizerConfig rtn = c_;
    rtn.method = "rtn";
    const std::unique_ptr<Quantizer> round = make_quantizer(rtn, "native");
    for (const ir::Node& n : ep_.graph->nodes()) {
      if (n.target != "linear") continue;
      const quant::LinearWeight lw = weights_.of(n);
      std::string why;
      if (!reason_to_keep(lw).empty() || bits_of(lw, &why) != 4 || why != "the scheme") continue;
      if (std::any_of(candidates.begin(), candidates.end(),
                      [&](const Candidate& c) { return c.value == lw.value; }))
        continue;
      const Tensor w = float_weight(lw);
      WeightToQuantize job;
      job.name = lw.target;
      job.data = w.data<float>();
      job.n = w.size(0);
      job.k = w.size(1);
      job.group = c_.group_size;
      job.zero_point = c_.zero_point;
      const QuantizedWeight q = round->quantize(job);
      const ActivationStats* stats = calibration_ ? calibration_->of(lw.target) : nullptr;
      double error = 0.0;
      const int64_t groups = job.k / job.group;
      for (int64_t r = 0; r < job.n; ++r) {
        for (int64_t c = 0; c < job.k; ++c) {
          const int64_t g = r * groups + c / job.group;
          const int zero = q.zeros.empty() ? 8 : q.zeros[size_t(g)];
          const double d = job.data[r * job.k + c] -
                           q.scales[size_t(g)] * (q.values[size_t(r * job.k + c)] - zero);
          error += (stats ? stats->mean_square[size_t(c)] : 1.0) * d * d;
        }
      }
      candidates.push_back({lw.value, error / double(job.n * job.k), job.n * job.k});
      total += job.n * job.k;
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.error > b.error; });
    int64_t in_int8 = 0;
    for (const Candidate& c : candidates) {
      if (double(in_int8) >= (1.0 - c_.ratio) * double(total)) break;
      sensitive_[c.value] = c.error;
      in_int8 += c.params;
    }
  }

  // Empty when the weight can be quantised, else why not.
  std::string reason_to_keep(const quant::LinearWeight& w) const {
    if (w.target.empty())
      return fmt::format("weight '{}' is computed in the graph, not a parameter",
                         ep_.graph->value(w.value).name);
    const ir::ValueInfo& v = ep_.graph->value(w.value);
    if (!is_floating(v.dtype) || v.sizes.size() != 2)
      return fmt::format("'{}' is not a float matrix", w.target);
    if (is_lm_head(w) && c_.lm_head_bits() == 0)
      return c_.keep_lm_head_float
                 ? fmt::format("'{}' is the lm_head (quantizer.keep_lm_head_float)", w.target)
                 : fmt::format("'{}' is the lm_head (set quantizer.lm_head to quantise it)",
                               w.target);
    for (size_t i = 0; i < exclude_.size(); ++i) {
      if (std::regex_search(w.target, exclude_[i]))
        return fmt::format("'{}' matches exclude pattern '{}'", w.target, c_.exclude[i]);
    }
    const int64_t k = v.sizes[w.transposed ? 0 : 1].value();
    if (bits_of(w) == 4 && k % c_.group_size != 0)
      return fmt::format("'{}' has in_features {}, not a multiple of the group size {}", w.target,
                         k, c_.group_size);
    return "";
  }

  ir::ValueId add_param(const std::string& target, const Tensor& t) {
    ir::Graph& g = *ep_.graph;
    ir::SymShape sizes;
    for (int64_t s : t.sizes()) sizes.push_back(sym::integer(s));
    std::string hint = "p_" + target;
    for (char& ch : hint)
      if (ch == '.') ch = '_';
    const ir::ValueId id = g.add_tensor_value(hint, t.dtype(), sizes);
    g.inputs.insert(g.inputs.begin() + long(last_param_), id);
    ep_.signature.inputs.insert(ep_.signature.inputs.begin() + long(last_param_),
                                InputSpec{InputKind::Parameter, g.value(id).name, target, true});
    ++last_param_;
    ep_.state[target] = t;
    return id;
  }

  // The weight on its grid (by the configured quantiser, or the fallback without
  // statistics), packed as three new parameters.
  const Packed& packed(const quant::LinearWeight& lw) {
    if (auto it = packed_.find(lw.value); it != packed_.end()) return it->second;
    const Tensor w = float_weight(lw);  // [n, k]
    const int64_t n = w.size(0), k = w.size(1);
    std::string why;
    const int bits = bits_of(lw, &why);
    WeightToQuantize job;
    job.name = lw.target;
    job.data = w.data<float>();
    job.n = n;
    job.k = k;
    job.bits = bits;
    job.zero_point = bits == 4 && c_.zero_point;  // int8 is symmetric
    job.group = bits == 8 ? k : c_.group_size;
    job.stats = calibration_ ? calibration_->of(lw.target) : nullptr;
    const std::string base = base_name(lw.target);
    if (is_lm_head(lw) && bits != c_.bits()) int8_heads_.push_back("'" + lw.target + "'");
    if (!is_lm_head(lw) && bits != c_.bits()) more_bits_.push_back("'" + lw.target + "'");
    ++weights_in_bits_[bits];
    Packed p;
    if (const PackedWeight* pre = calibration_ ? calibration_->packed_of(lw.target) : nullptr) {
      // Quantised during sequential calibration, by this stage with this config.
      INGOT_CHECK(pre->bits == bits && pre->group == job.group, InternalError,
                  "[quantize] '{}': calibration packed it as {} bits group {}, the stage wants "
                  "{} bits group {}",
                  lw.target, pre->bits, pre->group, bits, job.group);
      weights_report_.push_back(
          {lw.target, bits, job.group, job.zero_point, quantizer_->name(), why + "; sequential"});
      p.q = add_param(base + ".qweight", pre->qweight);
      p.scales = add_param(base + ".scales", pre->scales);
      if (pre->zeros.defined()) p.zeros = add_param(base + ".qzeros", pre->zeros);
      return packed_.emplace(lw.value, p).first->second;
    }
    const Quantizer* q = quantizer_.get();
    if (quantizer_->calibration() != CalibrationNeed::None && calibration_ && !job.stats) {
      uncalibrated_.push_back("'" + lw.target + "'");
      if (fallback_) q = fallback_.get();
    }
    const QuantizedWeight grid = q->quantize(job);
    if (q != quantizer_.get() || (q->calibration() != CalibrationNeed::None && !job.stats))
      why += "; no calibration statistics";
    weights_report_.push_back({lw.target, bits, job.group, job.zero_point, q->name(), why});
    cpu::PackedBuffers b = cpu::pack_weight(grid.values.data(), grid.scales, grid.zeros, n, k, bits);
    p.q = add_param(base + ".qweight", Tensor::from_vector(b.q, {n, bits == 8 ? k : k / 2}));
    p.scales = add_param(base + ".scales", Tensor::from_vector(b.scales, {n, k / job.group}));
    if (job.zero_point)
      p.zeros = add_param(base + ".qzeros", Tensor::from_vector(b.zeros, {n, k / job.group}));
    return packed_.emplace(lw.value, p).first->second;
  }

  // Float weights no node reads any more leave the graph, the signature and the state.
  void drop_unused(const std::set<ir::ValueId>& replaced) {
    const std::vector<int> uses = ir::use_counts(*ep_.graph);
    std::set<ir::ValueId> unused;
    for (ir::ValueId v : replaced)
      if (uses[size_t(v)] == 0) unused.insert(v);
    remove_inputs(ep_, unused);
  }

  ExportedProgram& ep_;
  const QuantizerConfig& c_;
  const quant::LinearWeights weights_;
  const CalibrationStats* calibration_;
  const std::set<std::string>* only_;  // quantise only these weights (null: all)
  std::unique_ptr<Quantizer> quantizer_;
  std::unique_ptr<Quantizer> fallback_;  // for weights without statistics
  std::vector<std::regex> exclude_;
  std::vector<std::pair<std::regex, int>> rules_;
  int layers_ = 0;
  size_t last_param_ = 0;
  std::set<ir::ValueId> embedding_weights_;
  std::map<ir::ValueId, Packed> packed_;
  std::map<int, int> weights_in_bits_;
  std::vector<std::string> kept_;
  std::vector<std::string> int8_heads_;     // lm_heads packed as int8 under an int4 scheme
  std::vector<std::string> more_bits_;      // int8 under an int4 scheme by rule or preset
  std::vector<std::string> uncalibrated_;   // calibrated method, weight without statistics
  std::vector<WeightReport> weights_report_;
  std::set<ir::ValueId> reported_;  // weights kept float, reported once
  std::map<ir::ValueId, double> sensitive_;  // int8 by ratio -> their int4 error
};

}  // namespace

void check_quantizer_rules(models::PretrainedModel& model, const QuantizerConfig& config) {
  if (!config.enabled() || config.rules.empty()) return;
  const std::map<std::string, Tensor> state = model.state_dict();
  for (const BitsRule& rule : config.rules) {
    const std::regex re(rule.pattern, std::regex::ECMAScript);
    bool matched = false;
    for (const auto& [name, t] : state) matched = matched || std::regex_search(name, re);
    INGOT_CHECK(matched, ValueError,
                "[quantizer] rule '{}' ({} bits) matches none of {}'s parameters (names look "
                "like '{}')",
                rule.pattern, rule.bits, model.architecture(),
                state.empty() ? std::string() : std::prev(state.end())->first);
  }
}

void write_quantization_report(const std::string& path,
                               const std::map<std::string, std::vector<WeightReport>>& components) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [component, weights] : components) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const WeightReport& w : weights) {
      list.push_back({{"name", w.name}, {"bits", w.bits}, {"group", w.group},
                      {"zero_point", w.zero_point}, {"method", w.method}, {"why", w.why}});
    }
    j[component] = {{"weights", std::move(list)}};
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    INGOT_CHECK(f.good(), IoError, "[quantize] cannot write the quantization report '{}'", path);
    f << j.dump(1) << "\n";
  }
  std::filesystem::rename(tmp, path);
}

QuantizeResult quantize_program(ExportedProgram& program, const QuantizerConfig& config,
                                const std::string& format, const CalibrationStats* calibration,
                                const std::set<std::string>* only) {
  config.validate("quantizer");
  if (!config.enabled()) return {};
  if (config.gguf_file_type()) {
    // llama.cpp's file types: the GGUF writer quantises the float weights into its blocks.
    INGOT_CHECK(format == "gguf", NotSupportedError,
                "[quantizer] scheme '{}' is a llama.cpp GGUF file type: export with format gguf "
                "(format '{}' takes scheme int8 or int4)",
                config.scheme, format);
    QuantizeResult r;
    r.notes.push_back(fmt::format(
        "quantize {}: the weights stay float here; the GGUF writer quantises them into "
        "llama.cpp's blocks{}",
        config.scheme,
        calibration ? fmt::format(", weighted by the importance of {} calibration samples of '{}'",
                                  calibration->samples, config.dataset)
                    : " (no dataset: llama.cpp's weighting without an importance matrix)"));
    return r;
  }
  return LinearRewriter(program, config, format, calibration, only).run();
}

}  // namespace ingot::exporters
