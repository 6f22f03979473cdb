#include "ingot/exporters/quantizers/linear_weights.h"

namespace ingot::exporters::quant {

LinearWeights::LinearWeights(const ExportedProgram& program) : program_(program) {
  const ir::Graph& g = *program.graph;
  for (size_t i = 0; i < g.inputs.size(); ++i) spec_of_[g.inputs[i]] = i;
  for (const ir::Node& n : g.nodes()) {
    if (n.target == "transpose.int" && n.outputs.size() == 1)
      if (auto* t = std::get_if<ir::TensorRef>(&n.args[0]); t && g.value(t->id).sizes.size() == 2)
        transposed_of_[n.outputs[0]] = t->id;
  }
}

std::optional<size_t> LinearWeights::input_index(ir::ValueId v) const {
  auto it = spec_of_.find(v);
  if (it == spec_of_.end()) return std::nullopt;
  return it->second;
}

LinearWeight LinearWeights::of(const ir::Node& linear) const {
  LinearWeight w;
  w.value = std::get<ir::TensorRef>(linear.args[1]).id;
  if (auto t = transposed_of_.find(w.value);
      t != transposed_of_.end() && spec_of_.contains(t->second)) {
    w.value = t->second;
    w.transposed = true;
  }
  if (auto i = input_index(w.value);
      i && program_.signature.inputs[*i].kind == InputKind::Parameter)
    w.target = program_.signature.inputs[*i].target;
  return w;
}

}  // namespace ingot::exporters::quant
