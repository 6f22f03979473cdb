#include "ingot/runtime/executor/interpreter.h"

#include <fmt/format.h>

#include "ingot/ir/input_binding.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "ingot/runtime/executor/compiled_graph.h"

namespace ingot::runtime {

size_t num_reinplaced(const CompiledGraph& g) {
  size_t n = 0;
  for (const auto& s : g.steps) n += s.inplace != nullptr;
  return n;
}

namespace {

// The in-place twin of a functional op ("index_copy" -> "index_copy_"), if registered.
// slice_scatter / select_scatter run as copy_ into a view (handled by the executor).
const OpDef* inplace_twin(const OpDef& op) {
  if (op.qualified_name == "slice_scatter" || op.qualified_name == "select_scatter") return &op;
  std::string name = op.schema.name + "_";
  if (!op.schema.overload.empty()) name += "." + op.schema.overload;
  const OpDef* twin = OpRegistry::instance().find(name);
  if (!twin || !twin->is_inplace() || twin->schema.mutated_arguments() != std::vector<int>{0})
    return nullptr;
  return twin;
}

}  // namespace

std::shared_ptr<const CompiledGraph> compile(const ir::Graph& g,
                                             const std::map<ir::ValueId, ir::ValueId>& writable) {
  auto c = std::make_shared<CompiledGraph>();
  c->graph = &g;
  const auto& nodes = g.nodes();
  c->steps.resize(nodes.size());
  // Last node reading each value; graph inputs and outputs are never released.
  std::vector<int> last_use(g.num_values(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (ir::ValueId v : ir::Graph::node_inputs(nodes[i])) last_use[size_t(v)] = int(i);
  }
  std::vector<bool> pinned(g.num_values(), false);
  for (ir::ValueId v : g.inputs) pinned[size_t(v)] = true;
  for (ir::ValueId v : g.outputs) pinned[size_t(v)] = true;
  for (size_t v = 0; v < g.num_values(); ++v) {
    if (!pinned[v] && last_use[v] >= 0)
      c->steps[size_t(last_use[v])].release.push_back(ir::ValueId(v));
  }
  // Reinplacing: follow each writable input through functional writes whose input value
  // is not read afterwards; keep the chain only if it ends at the input's new value.
  std::map<ir::ValueId, ir::ValueId> chain_of;  // current value -> writable input it lives in
  for (const auto& [in, out] : writable) chain_of[in] = in;
  std::map<ir::ValueId, std::vector<size_t>> chain_nodes;
  std::map<ir::ValueId, ir::ValueId> chain_end;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    const OpDef* op = OpRegistry::instance().find(n.target);
    c->steps[i].op = op;
    for (const auto& sub : n.subgraphs) c->steps[i].subgraphs.push_back(compile(*sub));
    if (!op || n.args.empty() || n.outputs.size() != 1) continue;
    const auto* self = std::get_if<ir::TensorRef>(&n.args[0]);
    if (!self) continue;
    auto it = chain_of.find(self->id);
    // A graph output (e.g. the buffer's new value, also read here) must survive.
    const bool is_output =
        std::find(g.outputs.begin(), g.outputs.end(), self->id) != g.outputs.end();
    if (it == chain_of.end() || is_output || last_use[size_t(self->id)] != int(i)) continue;
    const OpDef* twin = inplace_twin(*op);
    if (!twin) continue;
    // The value is read by this node only (as self); no other argument may alias it.
    bool read_elsewhere = false;
    auto inputs = ir::Graph::node_inputs(n);
    for (size_t k = 1; k < inputs.size(); ++k) read_elsewhere |= inputs[k] == self->id;
    if (read_elsewhere) continue;
    const ir::ValueId base = it->second;
    chain_of.erase(it);
    chain_of[n.outputs[0]] = base;
    chain_nodes[base].push_back(i);
    chain_end[base] = n.outputs[0];
    c->steps[i].inplace = twin;
  }
  for (const auto& [in, nodes_on_chain] : chain_nodes) {
    if (chain_end[in] == writable.at(in)) continue;
    for (size_t i : nodes_on_chain) c->steps[i].inplace = nullptr;
  }
  return c;
}

namespace {

class Executor {
 public:
  Executor(const CompiledGraph& c, sym::Bindings& b,
           const std::map<std::string, SymbolRange>& ranges, StoragePool* pool)
      : c_(c), g_(*c.graph), b_(b), ranges_(ranges), pool_(pool), values_(g_.num_values()) {
    if (pool_)
      allocate_ = [this](const IntShape& sizes, DType dtype) {
        return pool_->allocate(sizes, dtype);
      };
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    INGOT_CHECK(inputs.size() == g_.inputs.size(), InternalError,
                "[runtime] graph takes {} inputs, got {}", g_.inputs.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) values_[size_t(g_.inputs[i])] = inputs[i];
    const auto& nodes = g_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      execute(nodes[i], c_.steps[i]);
      for (ir::ValueId v : c_.steps[i].release) values_[size_t(v)] = Tensor();
    }
    std::vector<Tensor> out;
    for (ir::ValueId v : g_.outputs) out.push_back(values_[size_t(v)]);
    return out;
  }

 private:
  Value to_value(const ir::Argument& a) {
    return ir::argument_to_value(
        a, [this](ir::ValueId v) { return values_[size_t(v)]; },
        [this](const sym::Expr& e) { return SymInt(evaluate_size(e, b_)); });
  }

  // Binds unbacked symbols that first appear in an output's sizes.
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
                "[runtime] data-dependent size {} = {} is outside {} (from {} at {})", name,
                b_.at(name), describe_range(name, it->second.range), n.target, n.source.str());
  }

  std::vector<Tensor> run_sub(const CompiledGraph& sub, const std::vector<Tensor>& in) {
    Executor x(sub, b_, ranges_, pool_);
    return x.run(in);
  }

  std::vector<Tensor> tensors(const ir::Node& n, size_t from) {
    std::vector<Tensor> ts;
    for (size_t i = from; i < n.args.size(); ++i)
      ts.push_back(values_[size_t(std::get<ir::TensorRef>(n.args[i]).id)]);
    return ts;
  }

  void set_outputs(const ir::Node& n, const std::vector<Tensor>& outs) {
    INGOT_CHECK(outs.size() >= n.outputs.size(), InternalError,
                "[runtime] {} produced {} values for {}", n.target, outs.size(), n.outputs.size());
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      values_[size_t(n.outputs[i])] = outs[i];
      bind_output(n.outputs[i], outs[i], n);
    }
  }

  void execute(const ir::Node& n, const CompiledGraph::Step& step) {
    if (step.op) return execute_op(n, step);
    if (n.target == "assert") {
      INGOT_CHECK(evaluate_size(*n.condition, b_) != 0, ValueError,
                  "[runtime] assertion failed: {} ({})", n.condition->str(), n.message);
      return;
    }
    if (n.target == "item") {
      const Tensor& t = values_[size_t(std::get<ir::TensorRef>(n.args[0]).id)];
      int64_t v =
          t.dtype() == DType::Bool ? int64_t(t.item<bool>()) : to(t, DType::I64).item<int64_t>();
      b_[g_.value(n.outputs[0]).expr.name()] = v;
      return;
    }
    if (n.target == "cond") {
      bool pred;
      if (auto* e = std::get_if<sym::Expr>(&n.args[0]))
        pred = evaluate_size(*e, b_) != 0;
      else
        pred = values_[size_t(std::get<ir::TensorRef>(n.args[0]).id)].item<bool>();
      set_outputs(n, run_sub(*step.subgraphs[pred ? 0 : 1], tensors(n, 1)));
      return;
    }
    if (n.target == "map") {
      const size_t num_xs = size_t(std::get<sym::Expr>(n.args[0]).value());
      std::vector<Tensor> all = tensors(n, 1);
      const int64_t len = all.at(0).size(0);
      std::vector<std::vector<Tensor>> per_output(n.outputs.size());
      for (int64_t k = 0; k < len; ++k) {
        std::vector<Tensor> in;
        for (size_t i = 0; i < all.size(); ++i)
          in.push_back(i < num_xs ? select(all[i], 0, k) : all[i]);
        std::vector<Tensor> out = run_sub(*step.subgraphs[0], in);
        for (size_t i = 0; i < out.size(); ++i) per_output[i].push_back(out[i]);
      }
      std::vector<Tensor> results;
      for (size_t i = 0; i < per_output.size(); ++i) {
        if (len == 0) {
          const ir::ValueInfo& v = g_.value(n.outputs[i]);
          IntShape sizes;
          for (auto& e : v.sizes) sizes.push_back(evaluate_size(e, b_));
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
        if (!run_sub(*step.subgraphs[0], in).at(0).item<bool>()) break;
        carried = run_sub(*step.subgraphs[1], in);
      }
      set_outputs(n, carried);
      return;
    }
    INGOT_THROW(NotSupportedError, "[runtime] op '{}' is not registered in this build", n.target);
  }

  void execute_op(const ir::Node& n, const CompiledGraph::Step& step) {
    std::vector<Value> vals;
    vals.reserve(n.args.size());
    const auto& params = step.op->schema.arguments;
    for (size_t i = 0; i < n.args.size(); ++i) {
      Value v = to_value(n.args[i]);
      // A size traced into a Scalar slot (arange's end) runs as a plain Scalar.
      if (v.is(Value::Kind::Int) && i < params.size() && params[i].type.base == BaseType::Scalar) {
        v = Scalar(v.sym_int().expect_int());
      }
      vals.push_back(std::move(v));
    }
    if (step.inplace) {
      const std::string& name = step.op->qualified_name;
      if (name == "slice_scatter" || name == "select_scatter") {
        // self[view] = src, written into self.
        const Tensor& self = vals[0].tensor();
        Tensor view = name == "slice_scatter"
                          ? slice(self, vals[2].sym_int().expect_int(),
                                  vals[3].is_none() ? std::optional<SymInt>() : vals[3].sym_int(),
                                  vals[4].is_none() ? std::optional<SymInt>() : vals[4].sym_int(),
                                  vals[5].sym_int())
                          : select(self, vals[2].sym_int().expect_int(), vals[3].sym_int());
        copy_(view, vals[1].tensor());
        set_outputs(n, {self});
        return;
      }
      set_outputs(n, eager_call(OpArgs(*step.inplace, std::move(vals))));
      return;
    }
    OpArgs args(*step.op, std::move(vals));
    set_outputs(n, eager_call(args, pool_ ? &allocate_ : nullptr));
  }

  const CompiledGraph& c_;
  const ir::Graph& g_;
  sym::Bindings& b_;
  const std::map<std::string, SymbolRange>& ranges_;
  StoragePool* pool_;
  OutputAllocator allocate_;
  std::vector<Tensor> values_;
};

}  // namespace

std::vector<Tensor> run_graph(const CompiledGraph& graph, const std::vector<Tensor>& inputs,
                              sym::Bindings& bindings,
                              const std::map<std::string, SymbolRange>& ranges, StoragePool* pool) {
  Executor x(graph, bindings, ranges, pool);
  return x.run(inputs);
}

}  // namespace ingot::runtime
