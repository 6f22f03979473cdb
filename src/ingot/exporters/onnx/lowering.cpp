#include "ingot/exporters/onnx/lowering.h"

#include <fmt/format.h>

#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/onnx/tensor_data.h"
#include "ingot/exporters/registry.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::onnx {

// --- the translation table -------------------------------------------------------------

namespace {

KeyedRegistry<Translation>& table() {
  static KeyedRegistry<Translation> t("[onnx]", "translations");
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

DataType onnx_type(DType t) {
  return to_data_type(t);
}

// --- names -----------------------------------------------------------------------------

namespace {

std::string dim_str(const sym::Expr& e) {
  return e.str();
}

}  // namespace

std::vector<std::string> onnx_output_names(const ExportedProgram& p) {
  return lowering::output_names(p);
}

Dims TranslationContext::dims(const ir::ValueInfo& v) {
  std::vector<Dim> d;
  for (const sym::Expr& e : v.sizes) {
    if (e.is_integer())
      d.emplace_back(e.value());
    else
      d.emplace_back(dim_str(e));
  }
  return d;
}

// --- Lowering --------------------------------------------------------------------------

namespace {

// ONNX's spelling of the size-expression ops, in the current scope's builder.
class OnnxSymSpelling final : public lowering::SymSpelling<std::string> {
 public:
  explicit OnnxSymSpelling(Lowering& l) : l_(l) {}
  std::string int_constant(int64_t v) override { return b().constant_ints({v}); }
  std::string bool_constant(bool v) override {
    return b().add_constant(make_tensor("", full({1}, Scalar(v), DType::Bool)), "flag");
  }
  std::string int_op(lowering::IntOp op, const std::string& x, const std::string& y) override {
    switch (op) {
      case lowering::IntOp::kAdd:
        return b().add_op("Add", {x, y});
      case lowering::IntOp::kMul:
        return b().add_op("Mul", {x, y});
      case lowering::IntOp::kFloorDiv:  // non-negative operands: Div truncates = floors
        return b().add_op("Div", {x, y});
      case lowering::IntOp::kMod:
        return b().add_op("Mod", {x, y}, {attr("fmod", int64_t(0))});
      case lowering::IntOp::kMin:
        return b().add_op("Min", {x, y});
      case lowering::IntOp::kMax:
        return b().add_op("Max", {x, y});
    }
    INGOT_THROW(InternalError, "[onnx] unknown integer op");
  }
  std::string compare(lowering::CmpOp op, const std::string& x, const std::string& y) override {
    switch (op) {
      case lowering::CmpOp::kEq:
        return b().add_op("Equal", {x, y});
      case lowering::CmpOp::kNe:  // ONNX has no NotEqual
        return b().add_op("Not", {b().add_op("Equal", {x, y})});
      case lowering::CmpOp::kLt:
        return b().add_op("Less", {x, y});
      case lowering::CmpOp::kLe:
        return b().add_op("LessOrEqual", {x, y});
    }
    INGOT_THROW(InternalError, "[onnx] unknown comparison");
  }
  std::string logical(lowering::LogicOp op, const std::string& x, const std::string& y) override {
    return b().add_op(op == lowering::LogicOp::kAnd ? "And" : "Or", {x, y});
  }
  std::string logical_not(const std::string& x) override { return b().add_op("Not", {x}); }
  std::string bool_to_int(const std::string& x) override {
    return b().add_op("Cast", {x}, {attr("to", int64_t(DataType::Int64))});
  }

 private:
  GraphBuilder& b() { return *l_.scope().builder; }
  Lowering& l_;
};

}  // namespace

Lowering::Lowering(const ExportedProgram& program, const LoweringOptions& options)
    : program_(program), options_(options), spelling_(std::make_unique<OnnxSymSpelling>(*this)) {
  lowering::SymScopes<std::string> scopes;
  scopes.find = [this](const sym::Expr& e) -> std::optional<std::string> {
    for (Scope* s = scope_; s != nullptr; s = s->parent) {
      if (auto it = s->exprs.find(e); it != s->exprs.end()) return it->second;
    }
    return std::nullopt;
  };
  scopes.remember = [this](const sym::Expr& e, const std::string& v) {
    scope_->exprs.emplace(e, v);
  };
  scopes.symbol = [this](const sym::Expr& e) { return materialise_symbol(e); };
  sym_ = std::make_unique<lowering::SymLowering<std::string>>(*spelling_, std::move(scopes));
}

std::string Lowering::value_hint(const std::string& ingot_name) const {
  std::string h = ingot_name.empty() ? "v" : ingot_name;
  if (reserved_.contains(h)) h += "_value";
  return h;
}

std::string Lowering::materialise_symbol(const sym::Expr& symbol) {
  for (Scope* s = scope_; s != nullptr; s = s->parent) {
    if (auto it = s->exprs.find(symbol); it != s->exprs.end()) return it->second;
  }
  for (Scope* s = scope_; s != nullptr; s = s->parent) {
    auto it = s->sources.find(symbol.name());
    if (it == s->sources.end()) continue;
    const auto& [value, d] = it->second;
    // Emitted where the source lives, so every nested graph can reuse it.
    std::string v =
        s->builder->add_op("Shape", {value}, {attr("start", d), attr("end", d + 1)}, symbol.name());
    s->exprs.emplace(symbol, v);
    return v;
  }
  INGOT_THROW(
      InternalError,
      "[onnx] symbol '{}' is used before any input or value carries it (no Shape to read it from)",
      symbol.name());
}

std::string Lowering::sym1(const sym::Expr& e) {
  return sym_->value(e);
}

std::string Lowering::sym_bool1(const sym::Expr& e) {
  return sym_->condition(e);
}

std::vector<std::string> Lowering::lower_graph(GraphBuilder& b, const ir::Graph& g,
                                               const std::vector<std::string>& inputs) {
  INGOT_CHECK(inputs.size() == g.inputs.size(), InternalError,
              "[onnx] subgraph takes {} inputs, given {}", g.inputs.size(), inputs.size());
  Scope s;
  s.builder = &b;
  s.parent = scope_;
  s.graph = &g;
  s.values.resize(g.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) {
    s.values[size_t(g.inputs[i])] = inputs[i];
    typed_.insert(inputs[i]);
    lowering::add_symbol_sources(s.sources, inputs[i], g.value(g.inputs[i]));
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
  std::vector<std::string> out;
  for (ir::ValueId v : g.outputs) {
    INGOT_CHECK(s.values[size_t(v)].has_value(), InternalError,
                "[onnx] subgraph output '{}' was never produced", g.value(v).name);
    out.push_back(*s.values[size_t(v)]);
  }
  return out;
}

void Lowering::lower_nodes(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes()) {
    const Translation* t = find_translation(n.target);
    if (t == nullptr) {
      INGOT_THROW(
          NotSupportedError,
          "[onnx] op '{}' has no ONNX translation (called at {}). Register one next to the others "
          "in "
          "src/ingot/exporters/onnx/ with INGOT_ONNX_TRANSLATION(id, \"{}\", fn), or replace the "
          "op at "
          "trace time for the onnx backend with INGOT_REGISTER_OP_PATCH (docs/exporters.md)",
          n.target, n.source.str(), n.target);
    }
    TranslationContext cx(*this, g, n);
    (*t)(cx);
    for (ir::ValueId o : n.outputs) {
      const ir::ValueInfo& info = g.value(o);
      if (!info.is_tensor()) continue;
      INGOT_CHECK(scope_->values[size_t(o)].has_value(), InternalError,
                  "[onnx] the translation of '{}' did not set output '{}'", n.target, info.name);
      const std::string& value = *scope_->values[size_t(o)];
      lowering::add_symbol_sources(scope_->sources, value, info);
      // Types of intermediates for readers and for the optimiser (symbolic sizes other
      // than a bare symbol stay unknown).
      if (typed_.insert(value).second) {
        std::vector<Dim> d;
        for (const sym::Expr& e : info.sizes) {
          if (e.is_integer())
            d.emplace_back(e.value());
          else if (e.is_symbol())
            d.emplace_back(e.name());
          else
            d.emplace_back();
        }
        scope_->builder->set_value_info(value, onnx_type(info.dtype), d);
      }
    }
  }
}

LoweredModel Lowering::run() {
  const ir::Graph& graph = *program_.graph;
  const GraphSignature& sig = program_.signature;
  INGOT_CHECK(
      sig.inputs.size() == graph.inputs.size() && sig.outputs.size() == graph.outputs.size(),
      InternalError, "[onnx] the program's signature does not match its graph");
  LoweredModel result;
  std::set<std::string> mutated;
  for (const OutputSpec& o : sig.outputs) {
    if (o.kind != OutputKind::UserOutput) mutated.insert(o.target);
  }
  const std::vector<std::string> out_names = onnx_output_names(program_);
  for (const std::string& n : out_names) reserved_.insert(n);
  for (const InputSpec& in : sig.inputs)
    reserved_.insert(mutated.contains(in.target) ? "input." + in.target : in.target);

  ModelBuilder mb(options_.graph_name, options_.opset);
  GraphBuilder& g = mb.graph();
  Scope root;
  root.builder = &g;
  root.graph = &graph;
  root.values.resize(graph.num_values());
  std::vector<std::pair<std::string, Tensor>> buffer_defaults;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const InputSpec& in = sig.inputs[i];
    const ir::ValueInfo& info = graph.value(graph.inputs[i]);
    std::string name;
    const bool is_mutated = mutated.contains(in.target);
    if (in.kind == InputKind::UserInput || is_mutated) {
      name = g.add_input(is_mutated ? "input." + in.target : in.target, onnx_type(info.dtype),
                         TranslationContext::dims(info));
      result.input_names.push_back(name);
      if (in.kind != InputKind::UserInput)
        buffer_defaults.emplace_back(name, program_.state.at(in.target));
    } else {
      const Tensor& t = in.kind == InputKind::ConstantTensor ? program_.constants.at(in.target)
                                                             : program_.state.at(in.target);
      name = g.add_initializer(make_tensor(in.target, t));
    }
    root.values[size_t(graph.inputs[i])] = name;
    typed_.insert(name);
    lowering::add_symbol_sources(root.sources, name, info);
  }
  scope_ = &root;
  lower_nodes(graph);
  for (size_t j = 0; j < sig.outputs.size(); ++j) {
    const ir::ValueInfo& info = graph.value(graph.outputs[j]);
    const std::string& value = *root.values[size_t(graph.outputs[j])];
    result.output_names.push_back(
        g.add_output(value, onnx_type(info.dtype), TranslationContext::dims(info), out_names[j]));
    if (sig.outputs[j].kind != OutputKind::UserOutput) {
      result.inplace_pairs.emplace_back("input." + sig.outputs[j].target, out_names[j]);
    }
  }
  scope_ = nullptr;
  result.model = mb.build();
  // Mutated buffers: the input's default value is the buffer (an initializer of the
  // input's name), so callers that do not feed it get the exported state.
  for (auto& [name, t] : buffer_defaults)
    result.model.graph.initializer.push_back(make_tensor(name, t));
  return result;
}

LoweredModel lower_program(const ExportedProgram& program, const LoweringOptions& options) {
  Lowering l(program, options);
  return l.run();
}

// --- TranslationContext ----------------------------------------------------------------

GraphBuilder& TranslationContext::g() {
  return *l_.scope().builder;
}
int64_t TranslationContext::opset() const {
  return l_.opset();
}

std::string TranslationContext::in(size_t i) const {
  const auto* t = i < node_.args.size() ? std::get_if<ir::TensorRef>(&node_.args[i]) : nullptr;
  INGOT_CHECK(t != nullptr, InternalError, "[onnx] {}: argument {} is not a tensor", node_.target,
              i);
  const auto& v = l_.scope().values.at(size_t(t->id));
  INGOT_CHECK(v.has_value(), InternalError, "[onnx] {}: argument {} ('{}') has no ONNX value",
              node_.target, i, graph_.value(t->id).name);
  return *v;
}

std::vector<std::optional<std::string>> TranslationContext::in_list(size_t i) const {
  std::vector<std::optional<std::string>> out;
  for (const auto& e : std::get<ir::OptionalValueList>(node_.args.at(i))) {
    out.push_back(e ? l_.scope().values.at(size_t(*e)) : std::nullopt);
  }
  return out;
}

std::string TranslationContext::scalar(size_t i, DType dtype) {
  if (auto v = scalar_value(i)) return scalar_const(*v, dtype);
  const sym::Expr e = expr(i);  // a symbolic size
  return cast(sym0(e), DType::I64, dtype);
}

void TranslationContext::set_output(size_t i, const std::string& onnx_value) {
  l_.scope().values.at(size_t(node_.outputs.at(i))) = onnx_value;
}

std::string TranslationContext::hint(size_t i) const {
  return l_.value_hint(out_info(i).name);
}

std::string TranslationContext::op(std::string_view type, const std::vector<std::string>& inputs,
                                   std::vector<AttributeProto> attrs, std::string_view h) {
  return ops(type, inputs, 1, std::move(attrs), h)[0];
}

std::vector<std::string> TranslationContext::ops(std::string_view type,
                                                 const std::vector<std::string>& inputs,
                                                 size_t num_outputs,
                                                 std::vector<AttributeProto> attrs,
                                                 std::string_view h) {
  NodeOptions o;
  if (node_.source.known()) o.doc_string = node_.source.str();
  std::vector<std::string> hints(num_outputs, std::string(h.empty() ? hint() : std::string(h)));
  return g().add_node(type, inputs, hints, std::move(attrs), o);
}

std::string TranslationContext::constant(const Tensor& t, std::string_view h) {
  return g().add_constant(make_tensor("", contiguous(t)), h);
}

std::string TranslationContext::scalar_const(double value, DType dtype) {
  return constant(full({}, Scalar(value), dtype), "const");
}

std::string TranslationContext::ints_const(const std::vector<int64_t>& values) {
  return g().constant_ints(values);
}

std::string TranslationContext::cast(const std::string& value, DType from, DType to) {
  if (from == to) return value;
  return op("Cast", {value}, {attr("to", int64_t(onnx_type(to)))}, "cast");
}

std::string TranslationContext::shape_of(const std::string& value) {
  return op("Shape", {value}, {}, "shape");
}

std::string TranslationContext::sym1(const sym::Expr& e) {
  return l_.sym1(e);
}

std::string TranslationContext::sym0(const sym::Expr& e) {
  if (e.is_integer()) return constant(Tensor::scalar(e.value()), "const");
  return op("Squeeze", {l_.sym1(e), ints_const({0})}, {}, "size");
}

std::string TranslationContext::shape_tensor(const std::vector<sym::Expr>& sizes) {
  bool all_static = true;
  for (const sym::Expr& e : sizes) all_static = all_static && e.is_integer();
  if (all_static || sizes.empty()) {
    std::vector<int64_t> v;
    for (const sym::Expr& e : sizes) v.push_back(e.value());
    return ints_const(v);
  }
  std::vector<std::string> parts;
  for (const sym::Expr& e : sizes) parts.push_back(l_.sym1(e));
  if (parts.size() == 1) return parts[0];
  return op("Concat", parts, {attr("axis", int64_t(0))}, "sizes");
}

std::string TranslationContext::sym_bool1(const sym::Expr& e) {
  return l_.sym_bool1(e);
}

void TranslationContext::bind_symbol(const std::string& name, const std::string& value1d) {
  l_.scope().exprs[sym::symbol(name)] = value1d;
}

std::vector<std::string> TranslationContext::lower_graph(GraphBuilder& b, const ir::Graph& sub,
                                                         const std::vector<std::string>& inputs) {
  return l_.lower_graph(b, sub, inputs);
}

void TranslationContext::unsupported(const std::string& what) const {
  INGOT_THROW(NotSupportedError,
              "[onnx] '{}' (called at {}) cannot be translated to ONNX: {}. Register a better "
              "translation with "
              "INGOT_ONNX_TRANSLATION or an onnx op patch (docs/exporters.md)",
              node_.target, node_.source.str(), what);
}

}  // namespace ingot::exporters::onnx
