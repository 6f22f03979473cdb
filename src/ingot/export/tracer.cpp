#include "ingot/export/tracer.h"

#include <fmt/format.h>

#include "ingot/sym/sym_node.h"

namespace ingot::ir {

namespace {
thread_local Tracer* t_current = nullptr;
}  // namespace

// One step from a tensor to a view of it: the view op and its arguments after `self`.
struct ViewStep {
  const OpDef* op;
  std::vector<Value> args;  // without self
};

// Tensors that share memory: the base's current value, and how many times it changed.
struct AliasGroup {
  Graph* graph;     // the graph `base` belongs to
  ValueId base;
  int version = 0;
  int input = -1;   // index into Tracer::inputs_ for top-level inputs
  bool subgraph_input = false;  // a placeholder of a subgraph (must not be written)
  bool initialised = true;
};

// The annotation of a traced tensor.
struct TracedTensor final : TensorAnnotation {
  Tracer* tracer;
  std::shared_ptr<AliasGroup> group;
  std::vector<ViewStep> chain;  // empty: the tensor is the group's base
  ValueId value = -1;           // views: the value as of `seen_version`
  int seen_version = 0;
};

struct Tracer::Frame {
  std::shared_ptr<Graph> graph;
  // Values of outer frames already captured here: (frame, outer value) -> placeholder.
  std::map<std::pair<size_t, ValueId>, ValueId> captured;
  std::vector<std::pair<size_t, ValueId>> capture_order;  // outer values, in capture order
  std::string what;  // "cond true branch", ...
};

namespace {

TracedTensor* traced(const Tensor& t, const Tracer* owner) {
  if (!t.defined()) return nullptr;
  auto* a = dynamic_cast<TracedTensor*>(t.annotation().get());
  return a && a->tracer == owner ? a : nullptr;
}

SymShape exprs_of(const Shape& sizes) {
  SymShape s;
  s.reserve(sizes.size());
  for (const SymInt& d : sizes) s.push_back(sym::expr_of(d));
  return s;
}

Shape symints_of(sym::ShapeEnv& env, const SymShape& sizes) {
  Shape s;
  s.reserve(sizes.size());
  for (const sym::Expr& e : sizes) s.push_back(sym::make_symint(env, e));
  return s;
}

// "add.Tensor" -> "add", "mylib::sin" -> "sin": the name hint of an op's outputs.
std::string name_hint(const OpDef& op) {
  std::string n = op.schema.name;
  if (size_t c = n.rfind("::"); c != std::string::npos) n = n.substr(c + 2);
  while (!n.empty() && n.back() == '_') n.pop_back();
  return n;
}

}  // namespace

Tracer::Tracer(sym::ShapeEnv& env, std::shared_ptr<Graph> graph) : env_(env) {
  frames_.push_back(std::make_unique<Frame>(Frame{std::move(graph), {}, {}, "forward"}));
}
Tracer::~Tracer() = default;

Tracer* Tracer::current() { return t_current; }

Tracer::Active::Active(Tracer& t) : previous_(t_current), intercept_(&t) { t_current = &t; }
Tracer::Active::~Active() { t_current = previous_; }

SourceLine Tracer::call_site() const {
  if (source_override_) return *source_override_;
  if (const std::source_location* w = current_call_site()) return SourceLine::from(*w);
  return SourceLine::from(last_user_location(std::source_location()));
}

Tensor Tracer::make_traced(ValueId v, DType dtype, const Shape& sizes,
                           std::shared_ptr<AliasGroup> group) {
  auto a = std::make_shared<TracedTensor>();
  a->tracer = this;
  if (!group) {
    group = std::make_shared<AliasGroup>();
    group->graph = frames_[emit_frame_]->graph.get();
    group->base = v;
  }
  a->group = std::move(group);
  a->value = v;
  a->seen_version = a->group->version;
  return Tensor::meta(dtype, sizes, std::move(a));
}

Tensor Tracer::tensor_for(ValueId v) {
  const ValueInfo& info = frames_[emit_frame_]->graph->value(v);
  return make_traced(v, info.dtype, symints_of(env_, info.sizes), nullptr);
}

Tensor Tracer::add_input(const std::string& name_hint, DType dtype, const Shape& sizes,
                         InputKind kind, const std::string& target, bool persistent,
                         bool initialised) {
  Graph& g = *frames_[0]->graph;
  ValueId v = g.add_tensor_value(name_hint, dtype, exprs_of(sizes));
  g.inputs.push_back(v);
  auto group = std::make_shared<AliasGroup>();
  group->graph = &g;
  group->base = v;
  group->input = int(inputs_.size());
  group->initialised = initialised;
  inputs_.push_back(TracedInput{v, kind, target, persistent, group, {}});
  size_t saved = emit_frame_;
  emit_frame_ = 0;
  Tensor t = make_traced(v, dtype, sizes, group);
  emit_frame_ = saved;
  return t;
}

std::optional<ValueId> Tracer::mutated_value(const TracedInput& in) const {
  if (in.group->version == 0) return std::nullopt;
  return in.group->base;
}

size_t Tracer::frame_of(const Graph* g) const {
  for (size_t i = 0; i < frames_.size(); ++i) {
    if (frames_[i]->graph.get() == g) return i;
  }
  INGOT_THROW(ValueError,
              "[export] a tensor traced inside a finished cond/map/while_loop body is used "
              "outside it; return it from the body instead");
}

// The tensor's current value in its own frame, replaying its view chain from the base
// when the base changed since the value was made.
ValueId Tracer::resolve_in_own_frame(const Tensor& t) {
  TracedTensor* a = traced(t, this);
  AliasGroup& g = *a->group;
  if (!g.initialised) {
    const TracedInput& in = inputs_.at(size_t(g.input));
    INGOT_THROW(ValueError,
                "[export] {} '{}' is read at {} but was never initialised (it has no data); "
                "load a checkpoint or assign it before exporting",
                in.kind == InputKind::Buffer ? "buffer" : "parameter", in.target,
                call_site().str());
  }
  if (a->chain.empty()) return g.base;
  if (a->seen_version == g.version) return a->value;
  size_t saved = emit_frame_;
  emit_frame_ = frame_of(g.graph);
  Tensor cur = tensor_for(g.base);
  for (const ViewStep& step : a->chain) {
    std::vector<Value> values{cur};
    values.insert(values.end(), step.args.begin(), step.args.end());
    cur = record_values(*step.op, std::move(values)).at(0);
  }
  emit_frame_ = saved;
  a->value = traced(cur, this)->value;
  a->seen_version = g.version;
  return a->value;
}

ValueId Tracer::capture_into_current(size_t frame, ValueId v) {
  for (size_t f = frame + 1; f < frames_.size(); ++f) {
    Frame& fr = *frames_[f];
    auto key = std::make_pair(f - 1, v);
    auto it = fr.captured.find(key);
    if (it == fr.captured.end()) {
      const ValueInfo& outer = frames_[f - 1]->graph->value(v);
      ValueId inner = outer.is_tensor()
                          ? fr.graph->add_tensor_value(outer.name, outer.dtype, outer.sizes)
                          : fr.graph->add_sym_value(outer.name, outer.expr);
      it = fr.captured.emplace(key, inner).first;
      fr.capture_order.push_back(key);
    }
    v = it->second;
  }
  return v;
}

ValueId Tracer::value_of(const Tensor& t) {
  INGOT_CHECK(t.defined(), InternalError, "[export] undefined tensor argument");
  if (traced(t, this)) {
    ValueId v = resolve_in_own_frame(t);
    size_t frame = frame_of(traced(t, this)->group->graph);
    return frame + 1 == frames_.size() ? v : capture_into_current(frame, v);
  }
  if (!t.has_storage()) {
    INGOT_THROW(ValueError,
                "[export] a tensor without data that is not a traced value was used at {} (a "
                "placeholder parameter of a module that was not passed to export, or a tensor "
                "from another trace); pass the module to export_ or load its weights",
                call_site().str());
  }
  // A real tensor (captured by the function, or a non-parameter attribute): lifted as a
  // constant input of the program.
  auto it = lifted_constants_.find(&t.unsafe_impl());
  if (it == lifted_constants_.end()) {
    const std::string target = fmt::format("lifted_tensor_{}", lifted_constants_.size());
    size_t saved = emit_frame_;
    emit_frame_ = 0;
    add_input("c_" + target, t.dtype(), t.sym_sizes(), InputKind::ConstantTensor, target);
    emit_frame_ = saved;
    inputs_.back().constant = t;
    it = lifted_constants_.emplace(&t.unsafe_impl(), inputs_.size() - 1).first;
  }
  return capture_into_current(0, inputs_[it->second].value);
}

Argument Tracer::to_argument(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::None: return std::monostate{};
    case Value::Kind::Tensor: return TensorRef{value_of(v.tensor())};
    case Value::Kind::TensorList: {
      OptionalValueList l;
      for (const Tensor& t : v.tensor_list()) {
        l.push_back(t.defined() ? std::optional<ValueId>(value_of(t)) : std::nullopt);
      }
      return l;
    }
    case Value::Kind::Int: return sym::expr_of(v.sym_int());
    case Value::Kind::IntList: {
      std::vector<sym::Expr> l;
      for (const SymInt& i : v.int_list()) l.push_back(sym::expr_of(i));
      return l;
    }
    case Value::Kind::Float: return v.f64();
    case Value::Kind::Bool: return v.boolean();
    case Value::Kind::Scalar: return v.scalar();
    case Value::Kind::DType: return v.dtype();
    case Value::Kind::String: return v.string();
  }
  return std::monostate{};
}

SymInt Tracer::new_dynamic_size() {
  return sym::create_unbacked_size(env_, env_.attribute(std::source_location::current()));
}

std::vector<Tensor> Tracer::record_values(const OpDef& op, std::vector<Value> values) {
  return record(op, normalize_args(op, std::move(values)), call_site());
}

// Records a functional op: runs its shape function on the traced arguments and adds a
// node whose outputs are new traced tensors.
std::vector<Tensor> Tracer::record(const OpDef& op, const OpArgs& args, const SourceLine& src) {
  INGOT_CHECK(op.shape_fn != nullptr, NotSupportedError,
              "[export] op '{}' (called at {}) has no fake (shape) implementation, so export "
              "cannot trace it; register one with define_op(...).shape(fn) or "
              "register_custom_op(..., fake)",
              op.qualified_name, src.str());
  Node node;
  node.target = op.qualified_name;
  node.source = src;
  for (const Value& v : args.values()) node.args.push_back(to_argument(v));
  std::vector<OutputMeta> metas;
  {
    std::optional<sym::ShapeEnv::UserLocationScope> scope;
    if (const std::source_location* w = current_call_site()) scope.emplace(env_, *w);
    ShapeContextScope ctx(this);
    metas = op.shape_fn(args);
  }
  Graph& g = *frames_[emit_frame_]->graph;
  std::vector<Tensor> outputs;
  for (const OutputMeta& m : metas) {
    ValueId v = g.add_tensor_value(name_hint(op), m.dtype, exprs_of(m.sizes));
    node.outputs.push_back(v);
    outputs.push_back(make_traced(v, m.dtype, m.sizes, nullptr));
  }
  g.add_node(std::move(node));
  return outputs;
}

std::vector<Tensor> Tracer::intercept(const OpArgs& args) {
  const OpDef& op = args.op();
  SourceLine src = call_site();
  if (op.is_inplace()) return functionalize(args, src);
  std::vector<Tensor> outputs = record(op, args, src);
  if (!op.is_view()) return outputs;
  // View outputs join the alias group of `self`, one view step further from the base.
  TracedTensor* self = traced(args.tensor(0), this);
  if (!self) return outputs;  // a view of a lifted constant: never written through
  std::vector<Value> rest(args.values().begin() + 1, args.values().end());
  const bool multi = outputs.size() > 1 || op.schema.returns.at(0).type.is_list;
  SymInt offset = 0;
  int64_t dim = 0;
  if (multi) dim = args.tensor(0).wrap_dim(args.int_(2), op.qualified_name.c_str());  // split/chunk
  for (Tensor& out : outputs) {
    auto a = std::static_pointer_cast<TracedTensor>(out.annotation());
    a->group = self->group;
    a->chain = self->chain;
    a->seen_version = self->group->version;
    if (multi) {
      // split / chunk: output k is slice(dim, offset, offset + size_k) of self.
      static const OpDef& slice = OpRegistry::instance().get("slice.Tensor");
      SymInt len = out.sym_size(dim);
      a->chain.push_back(ViewStep{&slice, {dim, offset, offset + len, int64_t(1)}});
      offset = offset + len;
    } else {
      a->chain.push_back(ViewStep{&op, rest});
    }
  }
  return outputs;
}

// In-place op: record the functional twin, then write the result back into the target.
std::vector<Tensor> Tracer::functionalize(const OpArgs& args, const SourceLine& src) {
  const OpDef& op = args.op();
  std::vector<int> mutated = op.schema.mutated_arguments();
  INGOT_CHECK(mutated.size() == 1, NotSupportedError,
              "[export] op '{}' writes {} arguments; only single-target in-place ops can be "
              "traced", op.qualified_name, mutated.size());
  std::string functional = op.schema.name;
  while (!functional.empty() && functional.back() == '_') functional.pop_back();
  if (!op.schema.overload.empty()) functional += "." + op.schema.overload;
  const OpDef* twin = OpRegistry::instance().find(functional);
  INGOT_CHECK(twin != nullptr, NotSupportedError,
              "[export] in-place op '{}' at {} has no functional variant '{}' registered, so "
              "it cannot be functionalised",
              op.qualified_name, src.str(), functional);
  const Tensor& target = args.tensor(size_t(mutated[0]));
  Tensor result = record(*twin, normalize_args(*twin, args.values()), src).at(0);
  if (result.dtype() != target.dtype()) {
    static const OpDef& to_copy = OpRegistry::instance().get("_to_copy");
    result = record(to_copy, normalize_args(to_copy, {result, target.dtype()}), src).at(0);
  }
  write_back(target, result, src, op.qualified_name);
  return {target};
}

Tensor Tracer::inverse_view(const ViewStep& step, const Tensor& base, const Tensor& new_view) {
  const std::string& name = step.op->qualified_name;
  auto call = [&](const char* op, std::vector<Value> v) {
    return record_values(OpRegistry::instance().get(op), std::move(v)).at(0);
  };
  const auto& a = step.args;
  if (name == "slice.Tensor") return call("slice_scatter", {base, new_view, a[0], a[1], a[2], a[3]});
  if (name == "select.int") return call("select_scatter", {base, new_view, a[0], a[1]});
  if (name == "narrow") {
    return call("slice_scatter",
                {base, new_view, a[0], a[1], a[1].sym_int() + a[2].sym_int(), int64_t(1)});
  }
  if (name == "transpose.int") return call("transpose.int", {new_view, a[0], a[1]});
  if (name == "permute") {
    IntShape dims = to_int_shape(a[0].int_list()), inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t d = dims[i] < 0 ? dims[i] + int64_t(dims.size()) : dims[i];
      inverse[size_t(d)] = int64_t(i);
    }
    return call("permute", {new_view, inverse});
  }
  if (name == "view" || name == "reshape" || name.starts_with("squeeze") || name == "unsqueeze") {
    return call("reshape", {new_view, base.sym_sizes()});
  }
  INGOT_THROW(NotSupportedError,
              "[export] writing in place through a '{}' view is not supported (at {}): the "
              "view overlaps itself or cannot be inverted; write to a clone instead",
              name, call_site().str());
}

void Tracer::write_back(const Tensor& target, const Tensor& new_value, const SourceLine& src,
                        const std::string& op_name) {
  TracedTensor* a = traced(target, this);
  INGOT_CHECK(a != nullptr, ValueError,
              "[export] '{}' at {} writes in place into a tensor that is not a traced value (a "
              "constant captured by the function); make it a buffer of the module",
              op_name, src.str());
  AliasGroup& g = *a->group;
  if (g.input >= 0) {
    const TracedInput& in = inputs_[size_t(g.input)];
    INGOT_CHECK(in.kind != InputKind::Parameter, ValueError,
                "[export] parameter '{}' is updated in place by '{}' at {}; parameters cannot "
                "change in an exported program (register it as a buffer if it is state)",
                in.target, op_name, src.str());
    INGOT_CHECK(in.kind != InputKind::ConstantTensor, ValueError,
                "[export] tensor attribute '{}' is updated in place by '{}' at {}; only "
                "buffers may be updated (register it with register_buffer)",
                in.target, op_name, src.str());
  }
  INGOT_CHECK(frame_of(g.graph) + 1 == frames_.size() && !g.subgraph_input, ValueError,
              "[export] '{}' at {} writes in place into an input of a {}; bodies of "
              "cond/map/while_loop must not mutate their inputs (clone it inside and return "
              "the result)",
              op_name, src.str(), frames_.back()->what);
  INGOT_CHECK(new_value.sym_sizes().size() == target.sym_sizes().size(), ShapeError,
              "[export] in-place '{}' at {} would change the shape of its target {} to {}",
              op_name, src.str(), shape_str(target.sym_sizes()), shape_str(new_value.sym_sizes()));
  Tensor replacement = new_value;
  if (!a->chain.empty()) {
    // Values along the chain from the base to the target, then scatter back up.
    std::vector<Tensor> along{tensor_for(g.base)};
    for (size_t i = 0; i + 1 < a->chain.size(); ++i) {
      std::vector<Value> v{along.back()};
      v.insert(v.end(), a->chain[i].args.begin(), a->chain[i].args.end());
      along.push_back(record_values(*a->chain[i].op, std::move(v)).at(0));
    }
    for (size_t i = a->chain.size(); i-- > 0;) {
      replacement = inverse_view(a->chain[i], along[i], replacement);
    }
  }
  g.base = traced(replacement, this)->value;
  ++g.version;
  a->value = traced(new_value, this)->value;
  a->seen_version = g.version;
}

// --- data dependence -------------------------------------------------------------------

SymInt Tracer::item(const Tensor& t, const std::source_location& where) {
  INGOT_CHECK(t.sym_numel().maybe_int() == 1, ValueError,
              "[export] item() at {} needs a one-element tensor, got {}", sym::where_str(where),
              shape_str(t.sym_sizes()));
  Node node;
  node.target = "item";
  node.source = SourceLine::from(where);
  node.args.push_back(TensorRef{value_of(t)});
  sym::ValueRange range = t.dtype() == DType::Bool ? sym::ValueRange::boolean()
                                                   : sym::ValueRange::all();
  sym::Expr u = env_.create_unbacked_symint(range, where);
  Graph& g = *frames_[emit_frame_]->graph;
  node.outputs.push_back(g.add_sym_value(u.name(), u));
  g.add_node(std::move(node));
  return sym::make_symint(env_, u);
}

void Tracer::add_assert(const sym::Expr& condition, const std::string& message, const SourceLine& src) {
  Node node;
  node.target = "assert";
  node.source = src;
  node.condition = condition;
  node.message = message;
  frames_[emit_frame_]->graph->add_node(std::move(node));
}

void Tracer::check(const SymBool& condition, const std::source_location& where) {
  if (auto b = condition.maybe_bool()) {
    INGOT_CHECK(*b, ValueError, "[check] condition is false (at {})", sym::where_str(where));
    return;
  }
  sym::Expr e = sym::expr_of(condition);
  env_.check(e, where);
  add_assert(e, fmt::format("check({}) at {}", e.str(), SourceLine::from(where).str()), SourceLine::from(where));
}

// --- control flow ----------------------------------------------------------------------

std::shared_ptr<Graph> Tracer::trace_subgraph(const GraphFn& fn, const std::vector<ValueInfo>& inputs,
                                              const std::vector<std::string>& names,
                                              std::vector<std::pair<size_t, ValueId>>& captures,
                                              const char* what) {
  auto graph = std::make_shared<Graph>();
  frames_.push_back(std::make_unique<Frame>(Frame{graph, {}, {}, what}));
  size_t saved = emit_frame_;
  emit_frame_ = frames_.size() - 1;
  struct Pop {
    Tracer* t;
    size_t saved;
    ~Pop() {
      t->frames_.pop_back();
      t->emit_frame_ = saved;
    }
  } pop{this, saved};
  TensorList placeholders;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ValueId v = graph->add_tensor_value(names[i], inputs[i].dtype, inputs[i].sizes);
    graph->inputs.push_back(v);
    Tensor t = tensor_for(v);
    traced(t, this)->group->subgraph_input = true;
    placeholders.push_back(t);
  }
  TensorList outs = fn(placeholders);
  for (const Tensor& o : outs) graph->outputs.push_back(value_of(o));
  Frame& fr = *frames_.back();
  for (const auto& key : fr.capture_order) graph->inputs.push_back(fr.captured.at(key));
  captures = fr.capture_order;
  return graph;
}

// Appends the node to the current frame, making every subgraph take the union of all
// captured outer values (in one order) after its own inputs.
void Tracer::add_control_flow_node(Node node, std::vector<std::shared_ptr<Graph>> subgraphs,
                                   std::vector<std::vector<std::pair<size_t, ValueId>>> captures) {
  std::vector<std::pair<size_t, ValueId>> all;
  for (const auto& c : captures) {
    for (const auto& key : c) {
      if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
    }
  }
  for (size_t s = 0; s < subgraphs.size(); ++s) {
    Graph& g = *subgraphs[s];
    const size_t own = g.inputs.size() - captures[s].size();
    std::vector<ValueId> inputs(g.inputs.begin(), g.inputs.begin() + long(own));
    for (const auto& key : all) {
      auto it = std::find(captures[s].begin(), captures[s].end(), key);
      if (it != captures[s].end()) {
        inputs.push_back(g.inputs[own + size_t(it - captures[s].begin())]);
      } else {
        // Unused by this subgraph: a placeholder keeps the inputs aligned.
        const ValueInfo& outer = frames_[key.first]->graph->value(key.second);
        inputs.push_back(g.add_tensor_value(outer.name, outer.dtype, outer.sizes));
      }
    }
    g.inputs = std::move(inputs);
  }
  // The captured values are operands of the node in the current frame.
  // (Captures are made one frame at a time, so each key is a value of this frame.)
  for (const auto& key : all) node.args.push_back(TensorRef{key.second});
  node.subgraphs = std::move(subgraphs);
  frames_.back()->graph->add_node(std::move(node));
}

namespace {

std::vector<ValueInfo> metas_of(const TensorList& ts) {
  std::vector<ValueInfo> v;
  for (const Tensor& t : ts) {
    ValueInfo i;
    i.dtype = t.dtype();
    i.sizes = exprs_of(t.sym_sizes());
    v.push_back(i);
  }
  return v;
}

std::vector<std::string> names_like(const std::string& prefix, size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(fmt::format("{}{}", prefix, i));
  return names;
}

}  // namespace

TensorList Tracer::cond(const Tensor* pred_tensor, const SymBool* pred_sym, const GraphFn& true_fn,
                        const GraphFn& false_fn, const TensorList& operands,
                        const std::source_location& where) {
  const std::string at = sym::where_str(where);
  if (pred_sym) {
    // A predicate known at trace time selects its branch statically.
    if (auto b = pred_sym->maybe_bool()) return *b ? true_fn(operands) : false_fn(operands);
  } else {
    INGOT_CHECK(pred_tensor->dtype() == DType::Bool && pred_tensor->sym_numel().maybe_int() == 1,
                ValueError, "[cond] the predicate must be a one-element bool tensor, got {} {} (at {})",
                dtype_name(pred_tensor->dtype()), shape_str(pred_tensor->sym_sizes()), at);
  }
  Node node;
  node.target = "cond";
  node.source = SourceLine::from(where);
  if (pred_tensor) node.args.push_back(TensorRef{value_of(*pred_tensor)});
  else node.args.push_back(sym::expr_of(*pred_sym));
  for (const Tensor& t : operands) node.args.push_back(TensorRef{value_of(t)});
  auto metas = metas_of(operands);
  auto names = names_like("arg", operands.size());
  std::vector<std::pair<size_t, ValueId>> cap_t, cap_f;
  auto g_true = trace_subgraph(true_fn, metas, names, cap_t, "cond true branch");
  auto g_false = trace_subgraph(false_fn, metas, names, cap_f, "cond false branch");
  INGOT_CHECK(g_true->outputs.size() == g_false->outputs.size(), ValueError,
              "[cond] the true branch returns {} tensors, the false branch {} (at {})",
              g_true->outputs.size(), g_false->outputs.size(), at);
  Graph& g = *frames_.back()->graph;
  TensorList results;
  for (size_t i = 0; i < g_true->outputs.size(); ++i) {
    const ValueInfo& a = g_true->value(g_true->outputs[i]);
    const ValueInfo& b = g_false->value(g_false->outputs[i]);
    bool same = a.dtype == b.dtype && a.sizes.size() == b.sizes.size();
    for (size_t d = 0; same && d < a.sizes.size(); ++d) {
      same = env_.prove(sym::eq(a.sizes[d], b.sizes[d])) == sym::Truth::True;
    }
    INGOT_CHECK(same, ValueError,
                "[cond] output {} differs between branches: {} in the true branch, {} in the "
                "false branch (at {}); both branches must return the same dtypes and shapes",
                i, meta_str(a), meta_str(b), at);
    ValueId v = g.add_tensor_value("cond", a.dtype, a.sizes);
    node.outputs.push_back(v);
  }
  add_control_flow_node(std::move(node), {g_true, g_false}, {cap_t, cap_f});
  for (ValueId v : frames_.back()->graph->nodes().back().outputs) results.push_back(tensor_for(v));
  return results;
}

TensorList Tracer::map(const GraphFn& f, const TensorList& xs, const TensorList& args,
                       const std::source_location& where) {
  const std::string at = sym::where_str(where);
  INGOT_CHECK(!xs.empty(), ValueError, "[map] needs at least one tensor to map over (at {})", at);
  SymInt n = xs[0].sym_size(0);
  Node node;
  node.target = "map";
  node.source = SourceLine::from(where);
  node.args.push_back(sym::integer(int64_t(xs.size())));
  std::vector<ValueInfo> metas;
  for (const Tensor& x : xs) {
    INGOT_CHECK(x.dim() >= 1 && env_.prove(sym::eq(sym::expr_of(x.sym_size(0)), sym::expr_of(n))) ==
                                    sym::Truth::True,
                ShapeError, "[map] every mapped tensor needs the leading size {}, got {} (at {})",
                n.str(), shape_str(x.sym_sizes()), at);
    node.args.push_back(TensorRef{value_of(x)});
    ValueInfo slice;
    slice.dtype = x.dtype();
    slice.sizes = exprs_of(Shape(x.sym_sizes().begin() + 1, x.sym_sizes().end()));
    metas.push_back(slice);
  }
  for (const Tensor& a : args) node.args.push_back(TensorRef{value_of(a)});
  auto extra = metas_of(args);
  metas.insert(metas.end(), extra.begin(), extra.end());
  std::vector<std::pair<size_t, ValueId>> caps;
  auto body = trace_subgraph(f, metas, names_like("x", metas.size()), caps, "map body");
  Graph& g = *frames_.back()->graph;
  for (ValueId o : body->outputs) {
    const ValueInfo& m = body->value(o);
    SymShape sizes{sym::expr_of(n)};
    sizes.insert(sizes.end(), m.sizes.begin(), m.sizes.end());
    node.outputs.push_back(g.add_tensor_value("map", m.dtype, sizes));
  }
  add_control_flow_node(std::move(node), {body}, {caps});
  TensorList results;
  for (ValueId v : frames_.back()->graph->nodes().back().outputs) results.push_back(tensor_for(v));
  return results;
}

TensorList Tracer::while_loop(const GraphFn& cond_fn, const GraphFn& body_fn, const TensorList& carried,
                              const TensorList& additional, const std::source_location& where) {
  const std::string at = sym::where_str(where);
  Node node;
  node.target = "while_loop";
  node.source = SourceLine::from(where);
  node.args.push_back(sym::integer(int64_t(carried.size())));
  for (const Tensor& t : carried) node.args.push_back(TensorRef{value_of(t)});
  for (const Tensor& t : additional) node.args.push_back(TensorRef{value_of(t)});
  auto metas = metas_of(carried);
  auto extra = metas_of(additional);
  metas.insert(metas.end(), extra.begin(), extra.end());
  auto names = names_like("c", metas.size());
  std::vector<std::pair<size_t, ValueId>> cap_c, cap_b;
  auto g_cond = trace_subgraph(cond_fn, metas, names, cap_c, "while_loop cond_fn");
  auto g_body = trace_subgraph(body_fn, metas, names, cap_b, "while_loop body_fn");
  INGOT_CHECK(g_cond->outputs.size() == 1 && g_cond->value(g_cond->outputs[0]).dtype == DType::Bool,
              ValueError, "[while_loop] cond_fn must return one bool tensor (at {})", at);
  INGOT_CHECK(g_body->outputs.size() == carried.size(), ValueError,
              "[while_loop] body_fn returns {} tensors for {} carried (at {})",
              g_body->outputs.size(), carried.size(), at);
  Graph& g = *frames_.back()->graph;
  for (size_t i = 0; i < carried.size(); ++i) {
    const ValueInfo& out = g_body->value(g_body->outputs[i]);
    bool same = out.dtype == metas[i].dtype && out.sizes.size() == metas[i].sizes.size();
    for (size_t d = 0; same && d < out.sizes.size(); ++d) {
      same = env_.prove(sym::eq(out.sizes[d], metas[i].sizes[d])) == sym::Truth::True;
    }
    INGOT_CHECK(same, ValueError,
                "[while_loop] carried value {} changes from {} to {} in body_fn (at {}); the "
                "body must keep dtypes and shapes",
                i, meta_str(metas[i]), meta_str(out), at);
    node.outputs.push_back(g.add_tensor_value("while_loop", metas[i].dtype, metas[i].sizes));
  }
  add_control_flow_node(std::move(node), {g_cond, g_body}, {cap_c, cap_b});
  TensorList results;
  for (ValueId v : frames_.back()->graph->nodes().back().outputs) results.push_back(tensor_for(v));
  return results;
}

}  // namespace ingot::ir
