#include "ingot/ir/rewrite.h"

namespace ingot::ir {

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.num_values(), 0);
  for (const Node& n : g.nodes())
    for (ValueId v : Graph::node_inputs(n)) ++uses[size_t(v)];
  for (ValueId v : g.outputs) ++uses[size_t(v)];
  return uses;
}

}  // namespace ingot::ir

namespace ingot {

void remove_inputs(ExportedProgram& program, const std::set<ir::ValueId>& values) {
  ir::Graph& g = *program.graph;
  for (size_t i = g.inputs.size(); i-- > 0;) {
    if (!values.contains(g.inputs[i])) continue;
    const InputSpec spec = program.signature.inputs[i];
    g.inputs.erase(g.inputs.begin() + long(i));
    program.signature.inputs.erase(program.signature.inputs.begin() + long(i));
    bool still_named = false;
    for (const InputSpec& s : program.signature.inputs) still_named |= s.target == spec.target;
    if (still_named) continue;
    (spec.kind == InputKind::ConstantTensor ? program.constants : program.state).erase(spec.target);
  }
}

}  // namespace ingot
