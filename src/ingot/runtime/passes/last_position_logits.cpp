#include "ingot/runtime/passes/last_position_logits.h"

#include <memory>

namespace ingot::runtime {

std::optional<ExportedProgram> last_position_logits(const ExportedProgram& program) {
  const ir::Graph& g = *program.graph;
  // The first user output: the logits.
  ir::ValueId logits = -1;
  for (size_t i = 0; i < program.signature.outputs.size() && i < g.outputs.size(); ++i) {
    if (program.signature.outputs[i].kind == OutputKind::UserOutput) {
      logits = g.outputs[i];
      break;
    }
  }
  if (logits < 0) return std::nullopt;
  // Its producer must be linear(x [B, T, H], W) (or the quantised linear the export
  // quantizer writes for a quantised lm_head: x is its first argument too) with the logits
  // used nowhere else.
  int producer = -1;
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    const ir::Node& node = g.nodes()[n];
    for (ir::ValueId out : node.outputs)
      if (out == logits) producer = int(n);
    for (ir::ValueId in : ir::Graph::node_inputs(node))
      if (in == logits) return std::nullopt;
  }
  int output_uses = 0;
  for (ir::ValueId out : g.outputs) output_uses += out == logits;
  if (producer < 0 || output_uses != 1) return std::nullopt;
  const ir::Node& head = g.nodes()[size_t(producer)];
  if ((head.target != "linear" && head.target != "ingot::quantized_linear") ||
      head.outputs.size() != 1 || head.args.empty())
    return std::nullopt;
  const auto* x_ref = std::get_if<ir::TensorRef>(&head.args[0]);
  if (!x_ref) return std::nullopt;
  const ir::ValueInfo x = g.value(x_ref->id);
  if (x.sizes.size() != 3 || (x.sizes[1].is_integer() && x.sizes[1].value() <= 1))
    return std::nullopt;

  // x_last = x[:, T-1:T, :] (a view), then linear(x_last, W) -> [B, 1, vocab].
  auto graph = std::make_shared<ir::Graph>(g);
  const sym::Expr tokens = x.sizes[1];
  const ir::ValueId x_last = graph->add_tensor_value(x.name + "_last_position", x.dtype,
                                                     {x.sizes[0], sym::integer(1), x.sizes[2]});
  ir::Node slice;
  slice.target = "slice.Tensor";
  slice.args = {ir::TensorRef{x_ref->id}, sym::integer(1), tokens - 1, tokens, sym::integer(1)};
  slice.outputs = {x_last};
  slice.source = head.source;
  auto& nodes = graph->mutable_nodes();
  nodes[size_t(producer)].args[0] = ir::TensorRef{x_last};
  nodes.insert(nodes.begin() + producer, std::move(slice));
  graph->mutable_value(logits).sizes[1] = sym::integer(1);

  ExportedProgram out = program;
  out.graph = graph;
  out.verify();
  return out;
}

int LastPositionLogitsPass::run(ExportedProgram& program, const PassTarget& target) {
  if (!target.prefill) return 0;
  std::optional<ExportedProgram> last = last_position_logits(program);
  if (!last) return 0;
  program = std::move(*last);
  return 1;
}

}  // namespace ingot::runtime
