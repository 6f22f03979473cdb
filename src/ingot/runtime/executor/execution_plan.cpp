#include "ingot/runtime/executor/execution_plan.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "ingot/ir/input_binding.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/op_profile.h"

namespace ingot::runtime {

namespace {

bool is_scatter_into_view(const OpDef& op) {
  return op.qualified_name == "slice_scatter" || op.qualified_name == "select_scatter";
}

// An op eager_call would run through a view function or a kernel (not compute / decompose).
bool has_plain_kernel(const OpDef& op) {
  return op.view_fn || (!op.compute_fn && op.cpu_kernel);
}

// "op [output sizes] <- [first tensor argument's sizes]", a profile row's key.
std::string step_label(const std::string& op, const OpArgs& args, const std::vector<Tensor>& outs) {
  std::string label = op;
  if (!outs.empty() && outs[0].defined()) label += " " + outs[0].shape_string();
  for (const Value& v : args.values()) {
    if (v.is(Value::Kind::Tensor) && v.tensor().defined()) {
      label += " <- " + v.tensor().shape_string();
      break;
    }
  }
  return label;
}

const OpDef& copy_op() {
  static const OpDef& op = OpRegistry::instance().get("copy_");
  return op;
}

// Places kernel outputs in storages owned by the plan, reusing a storage once every
// value that lives in it is dead (node order is the same on every run).
class Arena {
 public:
  explicit Arena(std::vector<std::shared_ptr<Storage>>& storages) : storages_(storages) {}

  Tensor allocate(const IntShape& sizes, DType dtype) {
    const size_t nbytes = std::max<size_t>(size_t(shape_numel(sizes)) * itemsize(dtype), 1);
    std::shared_ptr<Storage>* best = nullptr;
    for (auto& s : storages_) {
      if (live_.at(s.get()) == 0 && s->nbytes() >= nbytes &&
          (!best || s->nbytes() < (*best)->nbytes()))
        best = &s;
    }
    if (!best) {
      storages_.push_back(Storage::allocate(nbytes));
      best = &storages_.back();
      live_[best->get()] = 0;
    }
    return Tensor::from_storage(*best, dtype, sizes, contiguous_strides(sizes), 0);
  }
  // A value now lives in t's storage (if the plan owns it) / no longer does.
  void define(const Tensor& t) { adjust(t, +1); }
  void release(const Tensor& t) { adjust(t, -1); }

 private:
  void adjust(const Tensor& t, int delta) {
    if (!t.defined() || !t.has_storage()) return;
    auto it = live_.find(t.storage().get());
    if (it != live_.end()) it->second += delta;
  }
  std::vector<std::shared_ptr<Storage>>& storages_;
  std::map<const Storage*, int> live_;  // values living in each plan storage (0: free)
};

// Whether symbol `name` appears in a node argument or value size other than asserts'.
bool used_beyond_asserts(const ir::Graph& g, const std::string& name) {
  auto mentions = [&](const sym::Expr& e) {
    for (const sym::Expr& f : sym::free_symbols(e))
      if (f.name() == name) return true;
    return false;
  };
  for (const ir::Node& n : g.nodes()) {
    if (n.target == "assert") continue;
    for (const ir::Argument& a : n.args) {
      if (auto* e = std::get_if<sym::Expr>(&a); e && mentions(*e)) return true;
      if (auto* l = std::get_if<std::vector<sym::Expr>>(&a))
        for (const sym::Expr& e : *l)
          if (mentions(e)) return true;
    }
  }
  for (size_t v = 0; v < g.num_values(); ++v) {
    const ir::ValueInfo& info = g.value(ir::ValueId(v));
    for (const sym::Expr& e : info.sizes)
      if (mentions(e)) return true;
  }
  return false;
}

// Symbols produced by item() (read again on every run).
std::vector<std::string> data_symbols(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const ir::Node& n : g.nodes())
    if (n.target == "item") names.push_back(g.value(n.outputs[0]).expr.name());
  return names;
}

bool mentions_any(const sym::Expr& e, const std::vector<std::string>& names) {
  for (const sym::Expr& f : sym::free_symbols(e))
    if (std::find(names.begin(), names.end(), f.name()) != names.end()) return true;
  return false;
}

}  // namespace

std::string ExecutionPlan::unplannable_reason(const CompiledGraph& c) {
  const auto& nodes = c.graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const CompiledGraph::Step& s = c.steps[i];
    const std::string what = "node " + std::to_string(i) + " (" + nodes[i].target + ")";
    if (!s.subgraphs.empty()) return what + " has subgraphs";
    if (!s.op) {
      if (nodes[i].target == "item") {
        const std::string& name = c.graph->value(nodes[i].outputs[0]).expr.name();
        if (used_beyond_asserts(*c.graph, name)) return what + " feeds more than asserts";
        continue;
      }
      if (nodes[i].target != "assert") return what + " is not a registry op";
      continue;
    }
    if (!has_plain_kernel(*s.op)) return what + " has no plain kernel";
    if (s.inplace && !is_scatter_into_view(*s.op) && !has_plain_kernel(*s.inplace))
      return what + "'s in-place twin has no plain kernel";
  }
  return "";
}

ExecutionPlan::ExecutionPlan(const CompiledGraph& c, const std::vector<Tensor>& inputs,
                             const sym::Bindings& b, std::vector<Tensor>& outputs) {
  const ir::Graph& g = *c.graph;
  const auto& nodes = g.nodes();
  INGOT_CHECK(inputs.size() == g.inputs.size(), InternalError,
              "[runtime] graph takes {} inputs, got {}", g.inputs.size(), inputs.size());

  // Which inputs must stay the very same tensor (see the header).
  std::vector<int> input_index(g.num_values(), -1);
  for (size_t i = 0; i < g.inputs.size(); ++i) input_index[size_t(g.inputs[i])] = int(i);
  std::vector<bool> bound(inputs.size(), false);
  for (ir::ValueId v : g.outputs)
    if (input_index[size_t(v)] >= 0) bound[size_t(input_index[size_t(v)])] = true;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    const CompiledGraph::Step& s = c.steps[i];
    // Views alias every tensor they read; in-place writes alias what they mutate
    // (a scatter into a view also reads its source through the copy step).
    std::vector<bool> arg_bound(n.args.size(), n.target == "item");
    if (s.op) {
      const bool view = s.op->view_fn != nullptr;
      const bool scatter = s.inplace && is_scatter_into_view(*s.op);
      std::vector<int> mutated = s.inplace ? std::vector<int>{0} : s.op->schema.mutated_arguments();
      for (size_t k = 0; k < n.args.size(); ++k) {
        arg_bound[k] = view || (scatter && k < 2) ||
                       std::find(mutated.begin(), mutated.end(), int(k)) != mutated.end();
      }
    }
    std::vector<ir::ValueId> rebindable;
    for (size_t k = 0; k < n.args.size(); ++k) {
      auto* r = std::get_if<ir::TensorRef>(&n.args[k]);
      if (!r) continue;
      if (arg_bound[k] && input_index[size_t(r->id)] >= 0)
        bound[size_t(input_index[size_t(r->id)])] = true;
      if (!arg_bound[k]) rebindable.push_back(r->id);
    }
    // Inputs read other than as a plain tensor argument (inside lists) stay bound.
    for (ir::ValueId v : ir::Graph::node_inputs(n)) {
      const int k = input_index[size_t(v)];
      if (k >= 0 && std::find(rebindable.begin(), rebindable.end(), v) == rebindable.end())
        bound[size_t(k)] = true;
    }
  }
  keys_.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    keys_.push_back({bound[i], t, t.dtype(), t.sizes(), t.strides()});
  }

  // Run once, recording every kernel call.
  bindings_ = b;
  const std::vector<std::string> data_syms = data_symbols(g);
  Arena arena(storages_);
  std::vector<Tensor> values(g.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) values[size_t(g.inputs[i])] = inputs[i];
  auto to_value = [&](const ir::Argument& a) {
    return ir::argument_to_value(
        a, [&](ir::ValueId v) { return values[size_t(v)]; },
        [&](const sym::Expr& e) { return SymInt(evaluate_size(e, b)); });
  };
  // `defined`: the outputs were counted when they were allocated (see below).
  auto set_outputs = [&](const ir::Node& n, const std::vector<Tensor>& outs, bool defined = false) {
    INGOT_CHECK(outs.size() >= n.outputs.size(), InternalError,
                "[runtime] {} produced {} values for {}", n.target, outs.size(), n.outputs.size());
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      values[size_t(n.outputs[k])] = outs[k];
      if (!defined) arena.define(outs[k]);
    }
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    const CompiledGraph::Step& s = c.steps[i];
    if (!s.op && n.target == "item") {
      Step item;
      item.source = values[size_t(std::get<ir::TensorRef>(n.args[0]).id)];
      item.slot = &bindings_[g.value(n.outputs[0]).expr.name()];
      steps_.push_back(std::move(item));
      run_check(steps_.back());
      continue;
    }
    if (!s.op) {  // assert over input sizes only: checked once, here; over data: every run
      if (mentions_any(*n.condition, data_syms)) {
        Step check;
        check.check = &n;
        steps_.push_back(std::move(check));
        run_check(steps_.back());
        continue;
      }
      INGOT_CHECK(evaluate_size(*n.condition, b) != 0, ValueError,
                  "[runtime] assertion failed: {} ({})", n.condition->str(), n.message);
      continue;
    }
    std::vector<Value> vals;
    vals.reserve(n.args.size());
    const auto& params = s.op->schema.arguments;
    for (size_t k = 0; k < n.args.size(); ++k) {
      Value v = to_value(n.args[k]);
      // A size traced into a Scalar slot (arange's end) runs as a plain Scalar.
      if (v.is(Value::Kind::Int) && k < params.size() && params[k].type.base == BaseType::Scalar)
        v = Scalar(v.sym_int().expect_int());
      vals.push_back(std::move(v));
    }
    if (s.inplace && is_scatter_into_view(*s.op)) {
      // self[view] = src: the view is fixed, each run copies src into it.
      const Tensor self = vals[0].tensor();
      Tensor view = s.op->qualified_name == "slice_scatter"
                        ? slice(self, vals[2].sym_int().expect_int(),
                                vals[3].is_none() ? std::optional<SymInt>() : vals[3].sym_int(),
                                vals[4].is_none() ? std::optional<SymInt>() : vals[4].sym_int(),
                                vals[5].sym_int())
                        : select(self, vals[2].sym_int().expect_int(), vals[3].sym_int());
      OpArgs args = normalize_args(copy_op(), {view, vals[1].tensor()});
      Step copy;
      copy.kernel = &copy_op().cpu_kernel;
      copy.args.emplace(std::move(args));
      copy.outputs = {view};
      if (op_profile_enabled())
        copy.label = step_label("copy_ (cache write)", *copy.args, copy.outputs);
      steps_.push_back(std::move(copy));
      ++num_kernels_;
      copy_op().cpu_kernel(*steps_.back().args, steps_.back().outputs);
      set_outputs(n, {self});
    } else if (s.op->view_fn) {
      // A view is computed once. A "view" op that had to copy this time (reshape of a
      // transposed tensor) is replayed as a copy into a plan buffer of its own.
      OpArgs args(*s.op, std::move(vals));
      std::vector<Tensor> outs = s.op->view_fn(args);
      for (Tensor& r : outs) {
        bool aliases = false;
        for (const Value& v : args.values())
          aliases |= v.is(Value::Kind::Tensor) && v.tensor().defined() &&
                     r.shares_storage_with(v.tensor());
        if (aliases) continue;
        Tensor buffer = arena.allocate(r.sizes(), r.dtype());
        steps_.push_back(recompute_step(*s.op, std::move(args), buffer));
        ++num_kernels_;
        run_recompute(steps_.back());
        r = buffer;
        break;  // (one output: multi-output views never copy)
      }
      set_outputs(n, outs);
    } else {
      const OpDef& op = s.inplace ? *s.inplace : *s.op;
      OpArgs args(op, std::move(vals));
      std::vector<OutputMeta> metas = op.shape_fn(args);
      std::vector<Tensor> outs;
      outs.reserve(metas.size());
      for (size_t k = 0; k < metas.size(); ++k) {
        const int alias = k < op.return_aliases.size() ? op.return_aliases[k] : -1;
        if (alias >= 0) {
          const Tensor& target = args.tensor(size_t(alias));
          target.check_writable(op.qualified_name.c_str());
          outs.push_back(target);
        } else {
          outs.push_back(arena.allocate(to_int_shape(metas[k].sizes), metas[k].dtype));
        }
        // Counted at once, so the next output of a multi-output op (topk's values and
        // indices) cannot be given the same free storage.
        arena.define(outs.back());
      }
      for (size_t k = 0; k < n.args.size(); ++k) {
        auto* r = std::get_if<ir::TensorRef>(&n.args[k]);
        const int in = r ? input_index[size_t(r->id)] : -1;
        if (in >= 0 && !bound[size_t(in)]) rebinds_.push_back({steps_.size(), k, size_t(in)});
      }
      Step call;
      call.kernel = &op.cpu_kernel;
      call.args.emplace(std::move(args));
      call.outputs = outs;
      if (op_profile_enabled()) call.label = step_label(op.qualified_name, *call.args, outs);
      steps_.push_back(std::move(call));
      ++num_kernels_;
      op.cpu_kernel(*steps_.back().args, steps_.back().outputs);
      set_outputs(n, outs, /*defined=*/true);
    }
    for (ir::ValueId v : s.release) {
      arena.release(values[size_t(v)]);
      values[size_t(v)] = Tensor();
    }
  }

  // Outputs; those in plan memory are handed out through a handle whose use count the
  // plan can read.
  outputs_.reserve(g.outputs.size());
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const Tensor& t = values[size_t(g.outputs[o])];
    const bool owned =
        t.has_storage() && std::any_of(storages_.begin(), storages_.end(),
                                       [&](const auto& s) { return s == t.storage(); });
    if (!owned) {
      outputs_.push_back(t);
      continue;
    }
    auto handle = std::make_shared<TensorImpl>(t.unsafe_impl());
    outputs_.push_back(Tensor(handle));
    owned_outputs_.push_back({o, std::move(handle), 0});
  }
  values.clear();
  // Every handle the plan itself holds on an output's storage, measured with no caller.
  for (OwnedOutput& o : owned_outputs_) o.storage_uses = o.handle->storage.use_count();
  outputs = outputs_;
}

bool ExecutionPlan::matches(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != keys_.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputKey& k = keys_[i];
    const Tensor& t = inputs[i];
    if (k.bound) {
      if (!t.is_same(k.tensor)) return false;
      continue;
    }
    if (!t.has_storage() || t.dtype() != k.dtype || t.strides() != k.strides) return false;
    const Shape& sizes = t.unsafe_impl().sizes;
    if (sizes.size() != k.sizes.size()) return false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d].is_symbolic() || sizes[d].expect_int() != k.sizes[d]) return false;
    }
  }
  return true;
}

bool ExecutionPlan::run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  // The plan holds each handle twice (owned_outputs_ and outputs_); more means the caller
  // still has it, a higher storage count that it has a view of it.
  for (const OwnedOutput& o : owned_outputs_) {
    if (o.handle.use_count() != 2 || o.handle->storage.use_count() != o.storage_uses) return false;
  }
  for (const Rebind& r : rebinds_) {
    const Tensor& now = inputs[r.input];
    Step& s = steps_[r.step];
    // The argument list is the plan's own: replace the tensor in place (no rebuild).
    Tensor& slot = const_cast<Tensor&>(s.args->tensor(r.arg));
    if (!slot.is_same(now)) slot = now;
  }
  if (op_profile_enabled()) {
    run_profiled();
  } else {
    for (Step& s : steps_) {
      if (s.kernel)
        (*s.kernel)(*s.args, s.outputs);
      else
        run_check(s);
    }
  }
  outputs = outputs_;
  return true;
}

void ExecutionPlan::run_profiled() {
  using Clock = std::chrono::steady_clock;
  for (Step& s : steps_) {
    const auto t0 = Clock::now();
    if (s.kernel)
      (*s.kernel)(*s.args, s.outputs);
    else
      run_check(s);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    op_profile_add(s.kernel ? s.label
                            : (s.view_op ? "recompute " + s.view_op->qualified_name
                                         : std::string("data check")),
                   dt);
  }
}

ExecutionPlan::Step ExecutionPlan::recompute_step(const OpDef& op, OpArgs args,
                                                  const Tensor& buffer) {
  Step st;
  st.view_op = &op;
  st.args.emplace(std::move(args));
  st.outputs = {buffer};
  return st;
}

void ExecutionPlan::run_recompute(const Step& s) {
  // Allocates (the op's own copy) but stays correct; decode graphs do not hit it.
  const Tensor r = s.view_op->view_fn(*s.args).at(0);
  OpArgs copy = normalize_args(copy_op(), {s.outputs[0], r});
  copy_op().cpu_kernel(copy, s.outputs);
}

void ExecutionPlan::run_check(const Step& s) const {
  if (s.view_op) {
    run_recompute(s);
    return;
  }
  if (s.slot) {
    *s.slot = s.source.item<int64_t>();
    return;
  }
  INGOT_CHECK(evaluate_size(*s.check->condition, bindings_) != 0, ValueError,
              "[runtime] assertion failed: {} ({})", s.check->condition->str(), s.check->message);
}

int64_t ExecutionPlan::owned_bytes() const {
  int64_t n = 0;
  for (const auto& s : storages_) n += int64_t(s->nbytes());
  return n;
}

}  // namespace ingot::runtime
