// decompose_to_core: re-traces a program, replacing ops that have a decomposition by the
// ops it calls (softmax.int -> _softmax, ...), until only core ops remain. The re-trace
// replays the graph on traced tensors with a fresh ShapeEnv whose symbols carry the
// program's names and ranges (hints from the example inputs).
#include <fmt/format.h>

#include "ingot/export/passes.h"
#include "ingot/export/tracer.h"
#include "ingot/sym/sym_node.h"

namespace ingot {

namespace {

// An op decompose_to_core replaces: it has a decomposition and is not kept. Composite
// ops (a decomposition and no kernel: outer, unbind, flip, ...) always qualify.
bool decomposable(const OpDef* op, const std::string& target, const std::set<std::string>& keep) {
  return op && op->decomposition_fn && !op->compute_fn && !keep.contains(target);
}

class Retracer {
 public:
  Retracer(sym::ShapeEnv& env, ir::Tracer& tracer, const std::set<std::string>& keep)
      : env_(env), tracer_(tracer), keep_(keep) {}

  // Replays `g` with `inputs` standing for its inputs; returns its outputs.
  TensorList replay(const ir::Graph& g, const TensorList& inputs) {
    std::vector<Tensor> values(g.num_values());
    for (size_t i = 0; i < g.inputs.size(); ++i) values[size_t(g.inputs[i])] = inputs[i];
    for (const ir::Node& n : g.nodes()) {
      tracer_.set_source_override(n.source);
      replay_node(n, values);
      tracer_.set_source_override(std::nullopt);
    }
    TensorList out;
    for (ir::ValueId v : g.outputs) out.push_back(values[size_t(v)]);
    return out;
  }

 private:
  SymInt symint(const sym::Expr& e) { return sym::make_symint(env_, e); }

  Value to_value(const ir::Argument& a, const std::vector<Tensor>& values) {
    return ir::argument_to_value(
        a, [&](ir::ValueId v) { return values[size_t(v)]; },
        [this](const sym::Expr& e) { return symint(e); });
  }

  TensorList tensors(const ir::Node& n, size_t from, const std::vector<Tensor>& values) {
    TensorList ts;
    for (size_t i = from; i < n.args.size(); ++i)
      ts.push_back(values[size_t(std::get<ir::TensorRef>(n.args[i]).id)]);
    return ts;
  }

  GraphFn sub(const ir::Graph& g) {
    return [this, &g](const TensorList& in) { return replay(g, in); };
  }

  void replay_node(const ir::Node& n, std::vector<Tensor>& values) {
    TensorList outs;
    if (n.target == "assert") {
      tracer_.add_assert(*n.condition, n.message, n.source);
      return;
    }
    if (n.target == "item") {
      tracer_.item(values[size_t(std::get<ir::TensorRef>(n.args[0]).id)],
                   std::source_location::current());
      return;
    }
    if (n.target == "cond") {
      TensorList operands = tensors(n, 1, values);
      if (auto* e = std::get_if<sym::Expr>(&n.args[0])) {
        SymBool pred = sym::make_symbool(env_, *e);
        outs = tracer_.cond(nullptr, &pred, sub(*n.subgraphs[0]), sub(*n.subgraphs[1]), operands,
                            std::source_location::current());
      } else {
        const Tensor& pred = values[size_t(std::get<ir::TensorRef>(n.args[0]).id)];
        outs = tracer_.cond(&pred, nullptr, sub(*n.subgraphs[0]), sub(*n.subgraphs[1]), operands,
                            std::source_location::current());
      }
    } else if (n.target == "map") {
      const size_t num_xs = size_t(std::get<sym::Expr>(n.args[0]).value());
      TensorList all = tensors(n, 1, values);
      TensorList xs(all.begin(), all.begin() + long(num_xs)),
          rest(all.begin() + long(num_xs), all.end());
      outs = tracer_.map(sub(*n.subgraphs[0]), xs, rest, std::source_location::current());
    } else if (n.target == "while_loop") {
      const size_t num_carried = size_t(std::get<sym::Expr>(n.args[0]).value());
      TensorList all = tensors(n, 1, values);
      TensorList carried(all.begin(), all.begin() + long(num_carried)),
          rest(all.begin() + long(num_carried), all.end());
      outs = tracer_.while_loop(sub(*n.subgraphs[0]), sub(*n.subgraphs[1]), carried, rest,
                                std::source_location::current());
    } else {
      const OpDef& op = OpRegistry::instance().get(n.target);
      std::vector<Value> vals;
      for (const ir::Argument& a : n.args) vals.push_back(to_value(a, values));
      // A decomposition calls other ops, which the active tracer records as they are;
      // decompose_to_core repeats until no composite op is left.
      outs = decomposable(&op, n.target, keep_)
                 ? op.decomposition_fn(normalize_args(op, std::move(vals)))
                 : call_op(op, std::move(vals));
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) values[size_t(n.outputs[i])] = outs.at(i);
  }

  sym::ShapeEnv& env_;
  ir::Tracer& tracer_;
  const std::set<std::string>& keep_;
};

bool has_decomposable_node(const ir::Graph& g, const std::set<std::string>& keep) {
  for (const ir::Node& n : g.nodes()) {
    const OpDef* op = OpRegistry::instance().find(n.target);
    if (decomposable(op, n.target, keep)) return true;
    for (const auto& s : n.subgraphs) {
      if (has_decomposable_node(*s, keep)) return true;
    }
  }
  return false;
}

void decompose_once(ExportedProgram& ep, const std::set<std::string>& keep) {
  // Symbols with the program's names and ranges; hints from the example inputs.
  // Data-dependent symbols are made again as the replay runs the ops that produce them.
  std::shared_ptr<sym::ShapeEnv> env = ep.make_shape_env(false);
  auto graph = std::make_shared<ir::Graph>();
  ir::Tracer tracer(*env, graph);
  TensorList inputs;
  for (size_t i = 0; i < ep.graph->inputs.size(); ++i) {
    const ir::ValueInfo& v = ep.graph->value(ep.graph->inputs[i]);
    const InputSpec& spec = ep.signature.inputs[i];
    Shape sizes;
    for (const sym::Expr& e : v.sizes) sizes.push_back(sym::make_symint(*env, e));
    inputs.push_back(
        tracer.add_input(v.name, v.dtype, sizes, spec.kind, spec.target, spec.persistent));
  }
  TensorList outputs;
  {
    ir::Tracer::Active active(tracer);
    Retracer r(*env, tracer, keep);
    outputs = r.replay(*ep.graph, inputs);
    for (const Tensor& t : outputs) graph->outputs.push_back(tracer.value_of(t));
  }
  for (size_t i = 0; i < graph->outputs.size(); ++i)
    ep.signature.outputs[i].name = graph->value(graph->outputs[i]).name;
  ep.graph = graph;
  ep.trace_context = env;
  eliminate_dead_code(ep);
  ep.verify();
}

}  // namespace

void decompose_to_core(ExportedProgram& ep, const std::set<std::string>& keep) {
  for (int round = 0; round < 16 && has_decomposable_node(*ep.graph, keep); ++round)
    decompose_once(ep, keep);
  INGOT_CHECK(!has_decomposable_node(*ep.graph, keep), InternalError,
              "[decompose_to_core] decompositions did not converge after 16 rounds");
}

}  // namespace ingot
