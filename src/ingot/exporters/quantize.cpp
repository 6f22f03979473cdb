#include "ingot/exporters/quantize.h"

#include <fmt/format.h>

#include <map>
#include <regex>
#include <set>

#include "ingot/core/error.h"
#include "ingot/export/passes.h"
#include "ingot/ir/rewrite.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"

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

class Quantizer {
 public:
  Quantizer(ExportedProgram& ep, const QuantizerConfig& c) : ep_(ep), c_(c) {
    for (const std::string& p : c.exclude) exclude_.emplace_back(p, std::regex::ECMAScript);
    ir::Graph& g = *ep.graph;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      spec_of_[g.inputs[i]] = i;
      if (ep.signature.inputs[i].kind == InputKind::Parameter) last_param_ = i + 1;
    }
    for (const ir::Node& n : g.nodes()) {
      if (n.target == "embedding")
        if (auto* t = std::get_if<ir::TensorRef>(&n.args[0])) embedding_weights_.insert(t->id);
      // transformers' Conv1D: linear(x, transpose(W [in, out], 0, 1)).
      if (n.target == "transpose.int" && n.outputs.size() == 1)
        if (auto* t = std::get_if<ir::TensorRef>(&n.args[0]); t && g.value(t->id).sizes.size() == 2)
          transposed_of_[n.outputs[0]] = t->id;
    }
  }

  std::vector<std::string> run() {
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
      ir::ValueId wid = std::get<ir::TensorRef>(n.args[1]).id;
      bool transposed = false;
      if (auto t = transposed_of_.find(wid);
          t != transposed_of_.end() && spec_of_.contains(t->second)) {
        wid = t->second;  // quantise the parameter, stored [out, in]
        transposed = true;
      }
      const std::string why = reason_to_keep(wid, transposed);
      if (!why.empty()) {
        kept(fmt::format("linear at {}: {}", n.source.str(), why));
        continue;
      }
      const Packed& p = packed(wid, transposed);
      ir::Argument bias = n.args.size() > 2 ? n.args[2] : ir::Argument{};
      const int64_t k = g.value(wid).sizes[transposed ? 0 : 1].value();
      const int bits = bits_of(wid);
      n.target = "ingot::quantized_linear";
      n.args = {n.args[0],
                ir::TensorRef{p.q},
                ir::TensorRef{p.scales},
                p.zeros >= 0 ? ir::Argument{ir::TensorRef{p.zeros}} : ir::Argument{},
                bias,
                sym::integer(bits),
                sym::integer(bits == 8 ? k : c_.group_size)};
      replaced.insert(wid);
      ++quantised;
    }
    eliminate_dead_code(ep_);  // the transposes of quantised Conv1D weights
    drop_unused(replaced);
    std::vector<std::string> report;
    report.push_back(
        fmt::format("quantize {}: {} linear layers quantised ({} weights, {} kept in float)",
                    scheme_name(), quantised, packed_.size(), kept_.size()));
    for (std::string& k : kept_) report.push_back("quantize: kept float: " + k);
    for (std::string& l : int8_heads_)
      report.push_back("quantize: " + l +
                       " as int8 per output channel (quantizer.keep_lm_head_float keeps it float)");
    ep_.verify();
    return report;
  }

 private:
  std::string scheme_name() const {
    if (c_.bits() == 8) return "int8 (per output channel)";
    return fmt::format("int4 (group {}{})", c_.group_size, c_.zero_point ? ", zero points" : "");
  }

  void kept(std::string s) { kept_.push_back(std::move(s)); }

  bool is_lm_head(ir::ValueId wid) const {
    const std::string& target = ep_.signature.inputs[spec_of_.at(wid)].target;
    return embedding_weights_.contains(wid) || target.ends_with("lm_head.weight");
  }

  // The bits `wid` is packed with: the scheme's, or the lm_head's (c_.lm_head_bits()).
  int bits_of(ir::ValueId wid) const { return is_lm_head(wid) ? c_.lm_head_bits() : c_.bits(); }

  // Empty when the weight can be quantised, else why not.
  std::string reason_to_keep(ir::ValueId wid, bool transposed = false) const {
    auto it = spec_of_.find(wid);
    if (it == spec_of_.end() || ep_.signature.inputs[it->second].kind != InputKind::Parameter)
      return fmt::format("weight '{}' is computed in the graph, not a parameter",
                         ep_.graph->value(wid).name);
    const std::string& target = ep_.signature.inputs[it->second].target;
    const ir::ValueInfo& v = ep_.graph->value(wid);
    if (!is_floating(v.dtype) || v.sizes.size() != 2)
      return fmt::format("'{}' is not a float matrix", target);
    if (is_lm_head(wid) && c_.lm_head_bits() == 0)
      return c_.keep_lm_head_float
                 ? fmt::format("'{}' is the lm_head (quantizer.keep_lm_head_float)", target)
                 : fmt::format("'{}' is the lm_head (set quantizer.lm_head to quantise it)",
                               target);
    for (size_t i = 0; i < exclude_.size(); ++i) {
      if (std::regex_search(target, exclude_[i]))
        return fmt::format("'{}' matches exclude pattern '{}'", target, c_.exclude[i]);
    }
    const int64_t k = v.sizes[transposed ? 0 : 1].value();
    if (bits_of(wid) == 4 && k % c_.group_size != 0)
      return fmt::format("'{}' has in_features {}, not a multiple of the group size {}", target, k,
                         c_.group_size);
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

  // `transposed`: the parameter is [in, out] (Conv1D) and is packed as [out, in].
  const Packed& packed(ir::ValueId wid, bool transposed) {
    if (auto it = packed_.find(wid); it != packed_.end()) return it->second;
    const std::string target = ep_.signature.inputs[spec_of_.at(wid)].target;
    Tensor w = to(ep_.state.at(target), DType::F32);
    if (transposed) w = transpose(w, 0, 1);
    w = contiguous(w);
    const int64_t k = w.size(1);
    const int bits = bits_of(wid);
    const bool zeros = bits == 4 && c_.zero_point;  // int8 is symmetric
    const int64_t group = bits == 8 ? k : c_.group_size;
    PackedLinearWeight b = quantize_linear_weight(w, bits, group, zeros);
    const std::string base = base_name(target);
    if (is_lm_head(wid) && bits != c_.bits()) int8_heads_.push_back("'" + target + "'");
    Packed p;
    p.q = add_param(base + ".qweight", b.qweight);
    p.scales = add_param(base + ".scales", b.scales);
    if (zeros) p.zeros = add_param(base + ".qzeros", b.zeros);
    return packed_.emplace(wid, p).first->second;
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
  std::vector<std::regex> exclude_;
  std::map<ir::ValueId, size_t> spec_of_;
  size_t last_param_ = 0;
  std::set<ir::ValueId> embedding_weights_;
  std::map<ir::ValueId, Packed> packed_;
  std::map<ir::ValueId, ir::ValueId> transposed_of_;  // transpose output -> its 2-D input
  std::vector<std::string> kept_;
  std::vector<std::string> int8_heads_;  // lm_heads packed as int8 under an int4 scheme
};

}  // namespace

std::vector<std::string> quantize_program(ExportedProgram& program, const QuantizerConfig& config) {
  config.validate("quantizer");
  if (!config.enabled()) return {};
  return Quantizer(program, config).run();
}

}  // namespace ingot::exporters
