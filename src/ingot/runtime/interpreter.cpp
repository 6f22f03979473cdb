#include "ingot/runtime/interpreter.h"

#include <fmt/format.h>

#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"

namespace ingot::runtime {

namespace {

int64_t eval(const sym::Expr& e, const sym::Bindings& b) {
  return sym::evaluate(e, [&](const sym::Expr& s) -> int64_t {
    auto it = b.find(s.name());
    INGOT_CHECK(it != b.end(), ValueError,
                "[runtime] symbol '{}' is not bound (no input or earlier value defines it)", s.name());
    return it->second;
  });
}

std::string range_str(const std::string& name, const sym::ValueRange& r) {
  if (r.hi == sym::ValueRange::kPosInf) return fmt::format("{} >= {}", name, r.lo);
  return fmt::format("{} in [{}, {}]", name, r.lo, r.hi);
}

// Binds symbol `e` (a bare symbol) to `actual`, or checks it; for other expressions,
// records the check for after every symbol is bound.
void bind_dim(const sym::Expr& e, int64_t actual, const std::string& what, sym::Bindings& b,
              std::vector<std::pair<sym::Expr, std::pair<int64_t, std::string>>>& deferred) {
  if (e.is_integer()) {
    INGOT_CHECK(e.value() == actual, ShapeError, "[runtime] {} is {}, but the program was exported for {}",
                what, actual, e.value());
    return;
  }
  if (e.is_symbol()) {
    auto [it, inserted] = b.emplace(e.name(), actual);
    INGOT_CHECK(inserted || it->second == actual, ShapeError,
                "[runtime] {} is {}, but it must equal the other sizes marked '{}' ({})", what,
                actual, e.name(), it->second);
    return;
  }
  deferred.push_back({e, {actual, what}});
}

}  // namespace

sym::Bindings bind_inputs(const ExportedProgram& p, const std::vector<Tensor>& inputs) {
  const ir::Graph& g = *p.graph;
  INGOT_CHECK(inputs.size() == g.inputs.size(), ValueError, "[runtime] the program takes {} inputs, got {}",
              g.inputs.size(), inputs.size());
  sym::Bindings b;
  std::vector<std::pair<sym::Expr, std::pair<int64_t, std::string>>> deferred;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::ValueInfo& v = g.value(g.inputs[i]);
    const std::string& who = p.signature.inputs[i].target;
    const Tensor& t = inputs[i];
    INGOT_CHECK(t.defined() && t.has_storage(), ValueError, "[runtime] input '{}' has no data", who);
    INGOT_CHECK(t.dtype() == v.dtype, DTypeError, "[runtime] input '{}' is {}, the program expects {}", who,
                dtype_name(t.dtype()), dtype_name(v.dtype));
    INGOT_CHECK(t.dim() == int64_t(v.sizes.size()), ShapeError,
                "[runtime] input '{}' has {} dims {}, the program expects {} ({})", who, t.dim(),
                t.shape_string(), v.sizes.size(), ir::meta_str(v));
    for (size_t d = 0; d < v.sizes.size(); ++d) {
      bind_dim(v.sizes[d], t.size(int64_t(d)), fmt::format("input '{}' dim {}", who, d), b, deferred);
    }
  }
  for (const auto& [name, r] : p.range_constraints) {
    auto it = b.find(name);
    if (it == b.end() || !r.backed) continue;
    if (r.range.contains(it->second)) continue;
    // Name the first input dim that carries the symbol.
    std::string where = name;
    for (size_t i = 0; i < inputs.size() && where == name; ++i) {
      const ir::ValueInfo& v = g.value(g.inputs[i]);
      for (size_t d = 0; d < v.sizes.size(); ++d) {
        if (v.sizes[d].is_symbol() && v.sizes[d].name() == name) {
          where = fmt::format("input '{}' dim {}", p.signature.inputs[i].target, d);
          break;
        }
      }
    }
    INGOT_THROW(ShapeError, "[runtime] {} is {}, outside {}", where, it->second, range_str(name, r.range));
  }
  for (const auto& [e, check] : deferred) {
    int64_t expected = eval(e, b);
    INGOT_CHECK(expected == check.first, ShapeError, "[runtime] {} is {}, but the program needs {} = {}",
                check.second, check.first, e.str(), expected);
  }
  return b;
}

namespace {

class Executor {
 public:
  Executor(const ir::Graph& g, sym::Bindings& b, const std::map<std::string, SymbolRange>& ranges)
      : g_(g), b_(b), ranges_(ranges), values_(g.num_values()) {}

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    INGOT_CHECK(inputs.size() == g_.inputs.size(), InternalError, "[runtime] graph takes {} inputs, got {}",
                g_.inputs.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) values_[size_t(g_.inputs[i])] = inputs[i];
    for (const ir::Node& n : g_.nodes()) execute(n);
    std::vector<Tensor> out;
    for (ir::ValueId v : g_.outputs) out.push_back(values_[size_t(v)]);
    return out;
  }

 private:
  Value to_value(const ir::Argument& a) {
    struct Conv {
      Executor& x;
      Value operator()(std::monostate) const { return Value(); }
      Value operator()(const ir::TensorRef& t) const { return x.values_[size_t(t.id)]; }
      Value operator()(const ir::OptionalValueList& l) const {
        TensorList ts;
        for (auto& e : l) ts.push_back(e ? x.values_[size_t(*e)] : Tensor());
        return ts;
      }
      Value operator()(const sym::Expr& e) const { return SymInt(eval(e, x.b_)); }
      Value operator()(const std::vector<sym::Expr>& l) const {
        SymIntList v;
        for (auto& e : l) v.push_back(SymInt(eval(e, x.b_)));
        return v;
      }
      Value operator()(double d) const { return d; }
      Value operator()(bool v) const { return v; }
      Value operator()(const Scalar& s) const { return s; }
      Value operator()(DType t) const { return t; }
      Value operator()(const std::string& s) const { return s; }
    };
    return std::visit(Conv{*this}, a);
  }

  // Binds unbacked symbols that first appear in an output's sizes; checks the others.
  void bind_output(ir::ValueId id, const Tensor& t, const ir::Node& n) {
    const ir::ValueInfo& v = g_.value(id);
    for (size_t d = 0; d < v.sizes.size(); ++d) {
      const sym::Expr& e = v.sizes[d];
      if (e.is_symbol() && !b_.contains(e.name())) {
        b_[e.name()] = t.size(int64_t(d));
        check_range(e.name(), n);
      }
    }
  }

  void check_range(const std::string& name, const ir::Node& n) {
    auto it = ranges_.find(name);
    if (it == ranges_.end()) return;
    INGOT_CHECK(it->second.range.contains(b_.at(name)), ValueError,
                "[runtime] data-dependent size {} = {} is outside {} (from {} at {})", name, b_.at(name),
                range_str(name, it->second.range), n.target, n.source.str());
  }

  std::vector<Tensor> run_sub(const ir::Graph& sub, const std::vector<Tensor>& in) {
    Executor x(sub, b_, ranges_);
    return x.run(in);
  }

  std::vector<Tensor> tensors(const ir::Node& n, size_t from) {
    std::vector<Tensor> ts;
    for (size_t i = from; i < n.args.size(); ++i) ts.push_back(values_[size_t(std::get<ir::TensorRef>(n.args[i]).id)]);
    return ts;
  }

  void set_outputs(const ir::Node& n, const std::vector<Tensor>& outs) {
    INGOT_CHECK(outs.size() >= n.outputs.size(), InternalError, "[runtime] {} produced {} values for {}",
                n.target, outs.size(), n.outputs.size());
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      values_[size_t(n.outputs[i])] = outs[i];
      bind_output(n.outputs[i], outs[i], n);
    }
  }

  void execute(const ir::Node& n) {
    if (n.target == "assert") {
      INGOT_CHECK(eval(*n.condition, b_) != 0, ValueError, "[runtime] assertion failed: {} ({})",
                  n.condition->str(), n.message);
      return;
    }
    if (n.target == "item") {
      const Tensor& t = values_[size_t(std::get<ir::TensorRef>(n.args[0]).id)];
      int64_t v = t.dtype() == DType::Bool ? int64_t(t.item<bool>()) : to(t, DType::I64).item<int64_t>();
      const ir::ValueInfo& info = g_.value(n.outputs[0]);
      b_[info.expr.name()] = v;
      return;
    }
    if (n.target == "cond") {
      bool pred;
      if (auto* e = std::get_if<sym::Expr>(&n.args[0])) pred = eval(*e, b_) != 0;
      else pred = values_[size_t(std::get<ir::TensorRef>(n.args[0]).id)].item<bool>();
      set_outputs(n, run_sub(*n.subgraphs[pred ? 0 : 1], tensors(n, 1)));
      return;
    }
    if (n.target == "map") {
      const size_t num_xs = size_t(std::get<sym::Expr>(n.args[0]).value());
      std::vector<Tensor> all = tensors(n, 1);
      const int64_t len = all.at(0).size(0);
      std::vector<std::vector<Tensor>> per_output(n.outputs.size());
      for (int64_t k = 0; k < len; ++k) {
        std::vector<Tensor> in;
        for (size_t i = 0; i < all.size(); ++i) in.push_back(i < num_xs ? select(all[i], 0, k) : all[i]);
        std::vector<Tensor> out = run_sub(*n.subgraphs[0], in);
        for (size_t i = 0; i < out.size(); ++i) per_output[i].push_back(out[i]);
      }
      std::vector<Tensor> results;
      for (size_t i = 0; i < per_output.size(); ++i) {
        if (len == 0) {
          const ir::ValueInfo& v = g_.value(n.outputs[i]);
          IntShape sizes;
          for (auto& e : v.sizes) sizes.push_back(eval(e, b_));
          results.push_back(Tensor::empty(sizes, v.dtype));
        } else {
          results.push_back(stack(per_output[i], 0));
        }
      }
      set_outputs(n, results);
      return;
    }
    if (n.target == "while_loop") {
      const size_t num_carried = size_t(std::get<sym::Expr>(n.args[0]).value());
      std::vector<Tensor> all = tensors(n, 1);
      std::vector<Tensor> carried(all.begin(), all.begin() + long(num_carried));
      while (true) {
        std::vector<Tensor> in = carried;
        in.insert(in.end(), all.begin() + long(num_carried), all.end());
        if (!run_sub(*n.subgraphs[0], in).at(0).item<bool>()) break;
        carried = run_sub(*n.subgraphs[1], in);
      }
      set_outputs(n, carried);
      return;
    }
    const OpDef& op = OpRegistry::instance().get(n.target);
    std::vector<Value> vals;
    vals.reserve(n.args.size());
    for (const ir::Argument& a : n.args) vals.push_back(to_value(a));
    OpArgs args(op, std::move(vals));
    set_outputs(n, eager_call(args));
  }

  const ir::Graph& g_;
  sym::Bindings& b_;
  const std::map<std::string, SymbolRange>& ranges_;
  std::vector<Tensor> values_;
};

}  // namespace

std::vector<Tensor> run_graph(const ir::Graph& graph, const std::vector<Tensor>& inputs,
                              sym::Bindings& bindings, const std::map<std::string, SymbolRange>& ranges) {
  Executor x(graph, bindings, ranges);
  return x.run(inputs);
}

}  // namespace ingot::runtime
