#include "ingot/exporters/openvino/lowering.h"

#include <fmt/format.h>

#include <limits>
#include <set>

#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/registry.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::openvino {

// --- the translation table -------------------------------------------------------------

namespace {

KeyedRegistry<Translation>& table() {
  static KeyedRegistry<Translation> t("[openvino]", "translations");
  return t;
}

}  // namespace

void register_translation(const std::string& op, Translation fn, std::source_location where) {
  table().add(op, std::move(fn), where);
}

const Translation* find_translation(std::string_view op) {
  return table().find(op);
}

std::vector<std::string> translated_ops() {
  return table().keys();
}

std::vector<int64_t> port_dims(const ir::ValueInfo& v) {
  std::vector<int64_t> d;
  for (const sym::Expr& e : v.sizes) d.push_back(e.is_integer() ? e.value() : -1);
  return d;
}

// --- names -----------------------------------------------------------------------------

std::vector<std::string> openvino_output_names(const ExportedProgram& p) {
  return lowering::output_names(p);
}

// --- Lowering --------------------------------------------------------------------------

namespace {

// OpenVINO's spelling of the size-expression ops (opset 1-15), in the current scope's
// graph.
class OpenVINOSymSpelling final : public lowering::SymSpelling<Value> {
 public:
  explicit OpenVINOSymSpelling(Lowering& l) : l_(l) {}
  Value int_constant(int64_t v) override { return g().ints({v}); }
  Value bool_constant(bool v) override { return g().constant(full({1}, Scalar(v), DType::Bool)); }
  Value int_op(lowering::IntOp op, const Value& x, const Value& y) override {
    switch (op) {
      case lowering::IntOp::kAdd:
        return g().op("Add", {x, y});
      case lowering::IntOp::kMul:
        return g().op("Multiply", {x, y});
      case lowering::IntOp::kFloorDiv:  // python (floor) division
        return g().op("Divide", {x, y});
      case lowering::IntOp::kMod:
        return g().op("FloorMod", {x, y});
      case lowering::IntOp::kMin:
        return g().op("Minimum", {x, y});
      case lowering::IntOp::kMax:
        return g().op("Maximum", {x, y});
    }
    INGOT_THROW(InternalError, "[openvino] unknown integer op");
  }
  Value compare(lowering::CmpOp op, const Value& x, const Value& y) override {
    static constexpr const char* kOps[] = {"Equal", "NotEqual", "Less", "LessEqual"};
    return g().op(kOps[int(op)], {x, y});
  }
  Value logical(lowering::LogicOp op, const Value& x, const Value& y) override {
    return g().op(op == lowering::LogicOp::kAnd ? "LogicalAnd" : "LogicalOr", {x, y});
  }
  Value logical_not(const Value& x) override { return g().op("LogicalNot", {x}); }
  Value bool_to_int(const Value& x) override {
    return g().op("Convert", {x}, {{"destination_type", "i64"}});
  }

 private:
  Graph& g() { return *l_.scope().graph; }
  Lowering& l_;
};

}  // namespace

Lowering::Lowering(const ExportedProgram& program, const LoweringOptions& options)
    : program_(program),
      options_(options),
      spelling_(std::make_unique<OpenVINOSymSpelling>(*this)) {
  lowering::SymScopes<Value> scopes;
  scopes.find = [this](const sym::Expr& e) -> std::optional<Value> {
    for (Scope* s = scope_; s != nullptr; s = s->parent) {
      if (auto it = s->exprs.find(e); it != s->exprs.end()) return import(s, it->second);
    }
    return std::nullopt;
  };
  scopes.remember = [this](const sym::Expr& e, const Value& v) {
    scope_->graph->info(v).dims = std::vector<int64_t>{1};
    scope_->exprs.emplace(e, v);
  };
  scopes.symbol = [this](const sym::Expr& e) { return materialise_symbol(e); };
  sym_ = std::make_unique<lowering::SymLowering<Value>>(*spelling_, std::move(scopes));
}

Value Lowering::import(Scope* from, Value v) {
  if (from == scope_) return v;
  INGOT_CHECK(scope_->parent != nullptr, InternalError,
              "[openvino] a value of an inner graph is read by an outer one");
  Scope* here = scope_;
  scope_ = here->parent;
  Value outer = import(from, v);
  scope_ = here;
  if (here->same_graph_as_parent) return outer;
  for (const auto& [o, param] : here->captures) {
    if (o == outer) return param;
  }
  const PortInfo& info = here->parent->graph->info(outer);
  Value param = here->graph->parameter(
      "captured", info.type, info.dims.value_or(std::vector<int64_t>{}), info.dims ? "" : "...");
  here->captures.emplace_back(outer, param);
  return param;
}

Value Lowering::materialise_symbol(const sym::Expr& symbol) {
  for (Scope* s = scope_; s != nullptr; s = s->parent) {
    if (auto it = s->exprs.find(symbol); it != s->exprs.end()) return import(s, it->second);
  }
  for (Scope* s = scope_; s != nullptr; s = s->parent) {
    auto it = s->sources.find(symbol.name());
    if (it == s->sources.end()) continue;
    const auto& [value, d] = it->second;
    // Emitted where the source lives, so every body can import it.
    Graph& g = *s->graph;
    Value shape = g.op("ShapeOf", {value}, {{"output_type", "i64"}});
    Value v = g.op("Gather", {shape, g.ints({d}), g.constant(Tensor::scalar(int64_t(0)))});
    g.info(v).dims = std::vector<int64_t>{1};
    s->exprs.emplace(symbol, v);
    return import(s, v);
  }
  INGOT_THROW(InternalError,
              "[openvino] symbol '{}' is used before any input or value carries it (no ShapeOf "
              "to read it from)",
              symbol.name());
}

Value Lowering::sym1(const sym::Expr& e) {
  return sym_->value(e);
}

Value Lowering::sym_bool1(const sym::Expr& e) {
  return sym_->condition(e);
}

std::vector<Value> Lowering::lower_inline(const ir::Graph& g, const std::vector<Value>& inputs) {
  std::vector<std::pair<Value, Value>> captures;
  return lower_body(*scope_->graph, g, inputs, captures, true);
}

std::vector<Value> Lowering::lower_body(Graph& body, const ir::Graph& g,
                                        const std::vector<Value>& params,
                                        std::vector<std::pair<Value, Value>>& captures,
                                        bool same_graph) {
  INGOT_CHECK(params.size() == g.inputs.size(), InternalError,
              "[openvino] subgraph takes {} inputs, given {}", g.inputs.size(), params.size());
  Scope s;
  s.graph = &body;
  s.parent = scope_;
  s.ir = &g;
  s.same_graph_as_parent = same_graph;
  s.values.resize(g.num_values());
  for (size_t i = 0; i < params.size(); ++i) {
    s.values[size_t(g.inputs[i])] = params[i];
    lowering::add_symbol_sources(s.sources, params[i], g.value(g.inputs[i]));
  }
  Scope* saved = scope_;
  scope_ = &s;
  try {
    lower_nodes(g);
  } catch (...) {
    scope_ = saved;
    throw;
  }
  scope_ = saved;
  std::vector<Value> out;
  for (ir::ValueId v : g.outputs) {
    INGOT_CHECK(s.values[size_t(v)].has_value(), InternalError,
                "[openvino] subgraph output '{}' was never produced", g.value(v).name);
    out.push_back(*s.values[size_t(v)]);
  }
  captures = s.captures;
  return out;
}

void Lowering::lower_nodes(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes()) {
    const Translation* t = find_translation(n.target);
    if (t == nullptr) {
      INGOT_THROW(NotSupportedError,
                  "[openvino] op '{}' has no OpenVINO translation (called at {}). Register one "
                  "next to the others in src/ingot/exporters/openvino/ with "
                  "INGOT_OPENVINO_TRANSLATION(id, \"{}\", fn), or replace the op at trace time "
                  "for the openvino backend with INGOT_REGISTER_OP_PATCH (docs/openvino.md)",
                  n.target, n.source.str(), n.target);
    }
    TranslationContext cx(*this, g, n);
    (*t)(cx);
    for (ir::ValueId o : n.outputs) {
      const ir::ValueInfo& info = g.value(o);
      if (!info.is_tensor()) continue;
      INGOT_CHECK(scope_->values[size_t(o)].has_value(), InternalError,
                  "[openvino] the translation of '{}' did not set output '{}'", n.target,
                  info.name);
      lowering::add_symbol_sources(scope_->sources, *scope_->values[size_t(o)], info);
    }
  }
}

std::string Lowering::partial_shape(const ir::ValueInfo& info) const {
  std::vector<std::string> parts;
  for (const sym::Expr& e : info.sizes) {
    if (e.is_integer()) {
      parts.push_back(std::to_string(e.value()));
      continue;
    }
    auto it = e.is_symbol() ? program_.range_constraints.find(e.name())
                            : program_.range_constraints.end();
    if (it == program_.range_constraints.end()) {
      parts.push_back("?");
      continue;
    }
    const int64_t lo = std::max<int64_t>(it->second.range.lo, 0);
    const int64_t hi = it->second.range.hi;
    const bool unbounded = hi >= int64_t(std::numeric_limits<int32_t>::max());
    if (unbounded)
      parts.push_back(lo == 0 ? "?" : fmt::format("{}..", lo));
    else
      parts.push_back(lo == hi ? std::to_string(lo) : fmt::format("{}..{}", lo, hi));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

LoweredModel Lowering::run() {
  const ir::Graph& graph = *program_.graph;
  const GraphSignature& sig = program_.signature;
  INGOT_CHECK(
      sig.inputs.size() == graph.inputs.size() && sig.outputs.size() == graph.outputs.size(),
      InternalError, "[openvino] the program's signature does not match its graph");
  LoweredModel result;
  result.model.name = options_.name;
  Graph& g = result.model.graph;
  std::set<std::string> mutated;
  for (const OutputSpec& o : sig.outputs) {
    if (o.kind != OutputKind::UserOutput) mutated.insert(o.target);
  }
  Scope root;
  root.graph = &g;
  root.ir = &graph;
  root.values.resize(graph.num_values());
  scope_ = &root;

  // GenAI's inputs: the batch is dim 0 of input_ids.
  std::optional<Value> beam_idx;
  if (options_.generation_inputs && options_.stateful && !mutated.empty()) {
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      if (sig.inputs[i].target != "input_ids") continue;
      const ir::ValueInfo& ids = graph.value(graph.inputs[i]);
      ir::ValueInfo two = ids;
      two.dtype = DType::I64;
      two.sizes = {ids.sizes.at(0), sym::symbol("past_and_new_tokens")};
      const std::string batch = partial_shape(ids).substr(0, partial_shape(ids).find(','));
      g.parameter("attention_mask", DType::I64, {port_dims(ids)[0], -1}, batch + ",?");
      g.parameter("position_ids", DType::I64, {port_dims(ids)[0], -1}, batch + ",?");
      beam_idx = g.parameter("beam_idx", DType::I32, {port_dims(ids)[0]}, batch);
    }
  }

  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const InputSpec& in = sig.inputs[i];
    const ir::ValueInfo& info = graph.value(graph.inputs[i]);
    const bool is_mutated = mutated.contains(in.target);
    Value v;
    if (is_mutated && options_.stateful) {
      // A variable: ReadValue of the state (initially the buffer, or zeros).
      for (const sym::Expr& e : info.sizes) {
        if (!e.is_integer())
          INGOT_THROW(NotSupportedError,
                      "[openvino] the mutated input '{}' has a symbolic size ({}); a stateful "
                      "model holds it in a variable of a fixed shape: export with stateful = "
                      "false (the pair input.{} / output.{})",
                      in.target, e.str(), in.target, in.target);
      }
      const std::vector<int64_t> dims = port_dims(info);
      Tensor init = in.kind == InputKind::UserInput
                        ? zeros(IntShape(dims.begin(), dims.end()), info.dtype)
                        : program_.state.at(in.target);
      Value init_v = g.constant(init, in.target + "/init");
      std::vector<std::string> parts;
      for (int64_t d : dims) parts.push_back(std::to_string(d));
      v = g.add_layer("ReadValue", {init_v}, {PortInfo{info.dtype, dims, {}}},
                      {{"variable_id", in.target},
                       {"variable_type", std::string(element_type_name(info.dtype))},
                       {"variable_shape", fmt::format("{}", fmt::join(parts, ","))}})[0];
      if (beam_idx && info.sizes.size() == 4) {
        v = g.op("Gather", {v, *beam_idx, g.constant(Tensor::scalar(int64_t(0)))});
        g.info(v).dims = dims;
      }
      result.variables.push_back(in.target);
    } else if (in.kind == InputKind::UserInput || is_mutated) {
      const std::string name = is_mutated ? "input." + in.target : in.target;
      v = g.parameter(name, info.dtype, port_dims(info), partial_shape(info));
    } else {
      const Tensor& t = in.kind == InputKind::ConstantTensor ? program_.constants.at(in.target)
                                                             : program_.state.at(in.target);
      v = g.constant(t, in.target);
    }
    root.values[size_t(graph.inputs[i])] = v;
    lowering::add_symbol_sources(root.sources, v, info);
  }
  lower_nodes(graph);
  const std::vector<std::string> names = openvino_output_names(program_);
  for (size_t j = 0; j < sig.outputs.size(); ++j) {
    const OutputSpec& o = sig.outputs[j];
    Value v = *root.values[size_t(graph.outputs[j])];
    if (o.kind != OutputKind::UserOutput && options_.stateful) {
      g.assign(v, o.target);
      continue;
    }
    g.result(v, names[j]);
    result.output_names.push_back(names[j]);
  }
  for (int32_t id : g.parameters())
    result.input_names.push_back(g.layers()[size_t(id)].outputs[0].names.at(0));
  scope_ = nullptr;
  return result;
}

LoweredModel lower_program(const ExportedProgram& program, const LoweringOptions& options) {
  Lowering l(program, options);
  return l.run();
}

// --- TranslationContext ----------------------------------------------------------------

Graph& TranslationContext::g() {
  return *l_.scope().graph;
}

Value TranslationContext::in(size_t i) {
  const auto* t = i < node_.args.size() ? std::get_if<ir::TensorRef>(&node_.args[i]) : nullptr;
  INGOT_CHECK(t != nullptr, InternalError, "[openvino] {}: argument {} is not a tensor",
              node_.target, i);
  const auto& v = l_.scope().values.at(size_t(t->id));
  INGOT_CHECK(v.has_value(), InternalError, "[openvino] {}: argument {} ('{}') has no value",
              node_.target, i, graph_.value(t->id).name);
  return *v;
}

std::vector<std::optional<Value>> TranslationContext::in_list(size_t i) {
  std::vector<std::optional<Value>> out;
  for (const auto& e : std::get<ir::OptionalValueList>(node_.args.at(i))) {
    out.push_back(e ? l_.scope().values.at(size_t(*e)) : std::nullopt);
  }
  return out;
}

Value TranslationContext::scalar(size_t i, DType dtype) {
  if (auto v = scalar_value(i)) return scalar_const(*v, dtype);
  return cast(sym0(expr(i)), DType::I64, dtype);
}

void TranslationContext::set_output(size_t i, Value v) {
  const ir::ValueInfo& info = out_info(i);
  PortInfo& p = g().info(v);
  INGOT_CHECK(p.type == info.dtype, InternalError,
              "[openvino] the translation of '{}' gives output {} as {}, the program has {}",
              node_.target, i, element_type_name(p.type), element_type_name(info.dtype));
  p.dims = port_dims(info);
  l_.scope().values.at(size_t(node_.outputs.at(i))) = v;
}

Value TranslationContext::op(std::string_view type, const std::vector<Value>& inputs,
                             Attributes attrs) {
  return ops(type, inputs, 1, std::move(attrs))[0];
}

std::vector<Value> TranslationContext::ops(std::string_view type, const std::vector<Value>& inputs,
                                           size_t n, Attributes attrs) {
  return g().ops(type, inputs, n, std::move(attrs), node_.source.known() ? source() : "");
}

Value TranslationContext::cast(Value v, DType from, DType to) {
  if (from == to) return v;
  return op("Convert", {v}, {{"destination_type", std::string(element_type_name(to))}});
}

Value TranslationContext::shape_of(Value v) {
  return op("ShapeOf", {v}, {{"output_type", "i64"}});
}

Value TranslationContext::binary(std::string_view type, Value a, Value b) {
  return op(type, {a, b});
}

Value TranslationContext::sym1(const sym::Expr& e) {
  return l_.sym1(e);
}

Value TranslationContext::sym0(const sym::Expr& e) {
  if (e.is_integer()) return constant(Tensor::scalar(e.value()));
  return op("Squeeze", {l_.sym1(e), ints_const({0})});
}

Value TranslationContext::shape_tensor(const std::vector<sym::Expr>& sizes) {
  bool all_static = true;
  for (const sym::Expr& e : sizes) all_static = all_static && e.is_integer();
  if (all_static || sizes.empty()) {
    std::vector<int64_t> v;
    for (const sym::Expr& e : sizes) v.push_back(e.value());
    return ints_const(v);
  }
  std::vector<Value> parts;
  for (const sym::Expr& e : sizes) parts.push_back(l_.sym1(e));
  if (parts.size() == 1) return parts[0];
  return op("Concat", parts, {{"axis", "0"}});
}

Value TranslationContext::sym_bool1(const sym::Expr& e) {
  return l_.sym_bool1(e);
}

void TranslationContext::bind_symbol(const std::string& name, Value value1d) {
  l_.scope().exprs[sym::symbol(name)] = value1d;
}

void TranslationContext::unsupported(const std::string& what) const {
  INGOT_THROW(NotSupportedError,
              "[openvino] '{}' (called at {}) cannot be translated to OpenVINO: {}. Register a "
              "better translation with INGOT_OPENVINO_TRANSLATION or an openvino op patch "
              "(docs/openvino.md)",
              node_.target, node_.source.str(), what);
}

}  // namespace ingot::exporters::openvino
