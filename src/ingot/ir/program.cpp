#include "ingot/ir/program.h"

#include <fmt/format.h>

#include "ingot/ir/input_binding.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "ingot/sym/sym_node.h"

namespace ingot {

const char* input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::UserInput:
      return "USER_INPUT";
    case InputKind::Parameter:
      return "PARAMETER";
    case InputKind::Buffer:
      return "BUFFER";
    case InputKind::ConstantTensor:
      return "CONSTANT_TENSOR";
  }
  return "?";
}

const char* output_kind_name(OutputKind k) {
  switch (k) {
    case OutputKind::UserOutput:
      return "USER_OUTPUT";
    case OutputKind::BufferMutation:
      return "BUFFER_MUTATION";
    case OutputKind::UserInputMutation:
      return "USER_INPUT_MUTATION";
  }
  return "?";
}

std::string GraphSignature::str() const {
  std::string s = "Graph signature:\n  inputs:\n";
  for (const InputSpec& i : inputs) {
    s += fmt::format("    {}: {} target='{}'{}\n", i.name, input_kind_name(i.kind), i.target,
                     i.kind == InputKind::Buffer && !i.persistent ? " (non-persistent)" : "");
  }
  s += "  outputs:\n";
  for (const OutputSpec& o : outputs) {
    s += fmt::format("    {}: {}{}\n", o.name, output_kind_name(o.kind),
                     o.target.empty() ? "" : fmt::format(" target='{}'", o.target));
  }
  return s;
}

size_t ExportedProgram::num_user_inputs() const {
  size_t n = 0;
  for (const InputSpec& i : signature.inputs) n += i.kind == InputKind::UserInput;
  return n;
}

std::string ExportedProgram::print() const {
  const ir::Graph& g = *graph;
  std::string params;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::ValueInfo& v = g.value(g.inputs[i]);
    params += fmt::format("{}{}: {}", i ? ", " : "", v.name, ir::meta_str(v));
  }
  // Static user inputs are baked in: listed with their value.
  std::vector<std::string> paths = in_spec.leaf_paths("", input_names);
  std::vector<const TreeSpec*> leaves;
  std::function<void(const TreeSpec&)> collect = [&](const TreeSpec& s) {
    if (s.is_leaf()) leaves.push_back(&s);
    for (const TreeSpec& c : s.children) collect(c);
  };
  collect(in_spec);
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i]->type == "static") {
      params += fmt::format("{}{} = {}", params.empty() ? "" : ", ",
                            i < paths.size() ? paths[i] : "?", static_value_str(leaves[i]->value));
    }
  }
  std::string out = fmt::format("ExportedProgram:\n  def forward({}):\n", params);
  out += g.print("    ");
  std::string rets;
  for (size_t i = 0; i < g.outputs.size(); ++i)
    rets += (i ? ", " : "") + g.value(g.outputs[i]).name;
  out += fmt::format("    return ({})\n\n", rets);
  out += signature.str();
  out += "Range constraints:";
  if (range_constraints.empty()) out += " {}";
  out += "\n";
  for (const auto& [name, r] : range_constraints) {
    out += fmt::format("  {}: {}{}\n", name, r.range.str(), r.backed ? "" : " (data-dependent)");
  }
  return out;
}

std::shared_ptr<sym::ShapeEnv> ExportedProgram::make_shape_env(bool with_unbacked) const {
  std::vector<Tensor> inputs;
  size_t next_user = 0;
  for (const InputSpec& in : signature.inputs) {
    if (in.kind == InputKind::UserInput)
      inputs.push_back(example_inputs.at(next_user++));
    else if (in.kind == InputKind::ConstantTensor)
      inputs.push_back(constants.at(in.target));
    else
      inputs.push_back(state.at(in.target));
  }
  sym::Bindings hints = bind_inputs(*this, inputs);
  auto env = std::make_shared<sym::ShapeEnv>();
  for (const auto& [name, r] : range_constraints) {
    if (!r.backed && !with_unbacked) continue;
    sym::ShapeEnv::SymbolOptions o;
    o.range = r.range;
    o.name = name;
    o.specialize_zero_one = false;
    auto hint = hints.find(name);
    env->create_symbol(hint != hints.end() ? hint->second : std::max<int64_t>(r.range.lo, 0), o);
  }
  return env;
}

namespace {

// Re-runs each op's shape function on its inputs' recorded metadata and compares with
// the recorded outputs. Data-dependent output sizes (bare unbacked symbols) match any
// fresh size the shape function asks for.
class ShapeChecker : public ShapeContext {
 public:
  ShapeChecker(sym::ShapeEnv& env, const std::map<std::string, SymbolRange>& ranges)
      : env_(env), ranges_(ranges) {}
  SymInt new_dynamic_size() override {
    sym::ShapeEnv::SymbolOptions o;
    o.name = "verify_size_" + std::to_string(fresh_++);
    o.specialize_zero_one = false;
    return sym::make_symint(env_, env_.create_symbol(2, o));
  }

  void check(const ir::Graph& g, const ir::Node& n, const OpDef& op, const std::string& where) {
    if (!op.shape_fn) return;
    std::vector<Value> values;
    for (const ir::Argument& a : n.args) values.push_back(to_value(g, a));
    std::vector<OutputMeta> metas;
    {
      ShapeContextScope scope(this);
      metas = op.shape_fn(OpArgs(op, std::move(values)));
    }
    INGOT_CHECK(metas.size() == n.outputs.size(), InternalError,
                "[verify] {}: {} records {} outputs, its shape function gives {}", where, n.target,
                n.outputs.size(), metas.size());
    for (size_t i = 0; i < metas.size(); ++i) {
      const ir::ValueInfo& rec = g.value(n.outputs[i]);
      bool same = metas[i].dtype == rec.dtype && metas[i].sizes.size() == rec.sizes.size();
      for (size_t d = 0; same && d < rec.sizes.size(); ++d) {
        const sym::Expr r = rec.sizes[d];
        auto range = r.is_symbol() ? ranges_.find(r.name()) : ranges_.end();
        const bool data_dependent = range != ranges_.end() && !range->second.backed;
        same = data_dependent || env_.simplify(sym::expr_of(metas[i].sizes[d])) == env_.simplify(r);
      }
      INGOT_CHECK(same, InternalError,
                  "[verify] {}: node {} ({}) records {} but its shape function gives {}[{}]", where,
                  rec.name, n.target, ir::meta_str(rec), dtype_name(metas[i].dtype),
                  shape_str(metas[i].sizes));
    }
  }

 private:
  Value to_value(const ir::Graph& g, const ir::Argument& a) {
    return ir::argument_to_value(
        a, [&](ir::ValueId v) { return meta(g.value(v)); },
        [this](const sym::Expr& e) { return sym::make_symint(env_, e); });
  }
  Tensor meta(const ir::ValueInfo& v) {
    Shape sizes;
    for (const sym::Expr& e : v.sizes) sizes.push_back(sym::make_symint(env_, e));
    return Tensor::meta(v.dtype, sizes);
  }

  sym::ShapeEnv& env_;
  const std::map<std::string, SymbolRange>& ranges_;
  int fresh_ = 0;
};

void verify_graph(const ir::Graph& g, std::vector<bool> defined, const std::string& where,
                  ShapeChecker* shapes) {
  auto check_defined = [&](ir::ValueId v, const ir::Node& n) {
    INGOT_CHECK(v >= 0 && size_t(v) < g.num_values() && defined[size_t(v)], InternalError,
                "[verify] {}: node {} uses value {} before it is defined", where, n.target, v);
  };
  for (ir::ValueId v : g.inputs) defined.at(size_t(v)) = true;
  for (const ir::Node& n : g.nodes()) {
    for (ir::ValueId v : ir::Graph::node_inputs(n)) check_defined(v, n);
    const bool control = n.target == "cond" || n.target == "map" || n.target == "while_loop";
    if (!control && n.target != "assert" && n.target != "item") {
      const OpDef* op = OpRegistry::instance().find(n.target);
      INGOT_CHECK(op != nullptr, InternalError, "[verify] {}: node calls unknown op '{}'", where,
                  n.target);
      INGOT_CHECK(n.args.size() == op->schema.arguments.size(), InternalError,
                  "[verify] {}: node {} has {} arguments, its schema {}", where, n.target,
                  n.args.size(), op->schema.arguments.size());
      INGOT_CHECK(!op->is_inplace(), InternalError,
                  "[verify] {}: in-place op {} left in a functional graph", where, n.target);
      if (shapes) shapes->check(g, n, *op, where);
    }
    if (n.target == "cond") {
      INGOT_CHECK(n.subgraphs.size() == 2, InternalError, "[verify] {}: cond needs two branches",
                  where);
    }
    for (const auto& sub : n.subgraphs) {
      // Every control-flow node has one leading argument (predicate or count), then the
      // operands its subgraphs take.
      INGOT_CHECK(sub->inputs.size() + 1 == n.args.size(), InternalError,
                  "[verify] {}: {} passes {} operands to a subgraph with {} inputs", where,
                  n.target, n.args.size() - 1, sub->inputs.size());
      verify_graph(*sub, std::vector<bool>(sub->num_values(), false), where + "/" + n.target,
                   shapes);
    }
    for (ir::ValueId o : n.outputs) {
      INGOT_CHECK(!defined.at(size_t(o)), InternalError, "[verify] {}: value {} defined twice",
                  where, g.value(o).name);
      defined[size_t(o)] = true;
    }
  }
  for (ir::ValueId v : g.outputs) {
    INGOT_CHECK(defined.at(size_t(v)), InternalError, "[verify] {}: output {} is never defined",
                where, g.value(v).name);
  }
}

}  // namespace

void ExportedProgram::verify() const {
  INGOT_CHECK(graph != nullptr, InternalError, "[verify] program without a graph");
  INGOT_CHECK(signature.inputs.size() == graph->inputs.size(), InternalError,
              "[verify] signature lists {} inputs, the graph has {}", signature.inputs.size(),
              graph->inputs.size());
  INGOT_CHECK(signature.outputs.size() == graph->outputs.size(), InternalError,
              "[verify] signature lists {} outputs, the graph has {}", signature.outputs.size(),
              graph->outputs.size());
  for (const InputSpec& in : signature.inputs) {
    if (in.kind == InputKind::Parameter || in.kind == InputKind::Buffer) {
      INGOT_CHECK(state.contains(in.target), InternalError, "[verify] state '{}' missing",
                  in.target);
    }
    if (in.kind == InputKind::ConstantTensor) {
      INGOT_CHECK(constants.contains(in.target), InternalError, "[verify] constant '{}' missing",
                  in.target);
    }
  }
  // Shapes are re-derived where the example inputs allow binding every symbol (a
  // loaded program without them gets the structural checks only).
  std::shared_ptr<sym::ShapeEnv> env;
  if (example_inputs.size() == num_user_inputs()) env = make_shape_env(true);
  std::optional<ShapeChecker> shapes;
  if (env) shapes.emplace(*env, range_constraints);
  verify_graph(*graph, std::vector<bool>(graph->num_values(), false), "graph",
               shapes ? &*shapes : nullptr);
}

}  // namespace ingot
