#include "ingot/runtime/passes/fuse_silu_mul.h"

#include <memory>

#include "ingot/ir/rewrite.h"

namespace ingot::runtime {
namespace {

using ir::tensor_arg;

}  // namespace

ExportedProgram fuse_silu_mul(const ExportedProgram& program, int* fused) {
  ExportedProgram out = program;
  auto graph = std::make_shared<ir::Graph>(*program.graph);
  const std::vector<int> uses = ir::use_counts(*graph);
  // silu output value -> its gate (the silu's input), and the silu's node index.
  std::vector<ir::ValueId> gate_of(graph->num_values(), -1);
  std::vector<size_t> silu_node(graph->num_values(), 0);
  std::vector<bool> drop(graph->nodes().size(), false);
  int count = 0;
  for (size_t i = 0; i < graph->nodes().size(); ++i) {
    ir::Node& n = graph->mutable_nodes()[i];
    if (n.target == "silu" && n.outputs.size() == 1 && tensor_arg(n, 0) &&
        uses[size_t(n.outputs[0])] == 1) {
      gate_of[size_t(n.outputs[0])] = tensor_arg(n, 0)->id;
      silu_node[size_t(n.outputs[0])] = i;
      continue;
    }
    if (n.target != "mul.Tensor" || n.outputs.size() != 1) continue;
    const ir::TensorRef* a = tensor_arg(n, 0);
    const ir::TensorRef* b = tensor_arg(n, 1);
    if (!a || !b) continue;
    // mul(silu(gate), up) or mul(up, silu(gate)); not silu(x) * silu(x).
    const bool first = gate_of[size_t(a->id)] >= 0;
    const bool second = gate_of[size_t(b->id)] >= 0 && a->id != b->id;
    if (!first && !second) continue;
    const ir::ValueId act = first ? a->id : b->id;
    const ir::ValueId up = first ? b->id : a->id;
    const ir::ValueInfo& act_info = graph->value(act);
    const ir::ValueInfo& up_info = graph->value(up);
    const ir::ValueInfo& result = graph->value(n.outputs[0]);
    // Same shape and dtype throughout: no broadcasting, no promotion.
    if (up_info.dtype != act_info.dtype || result.dtype != act_info.dtype ||
        up_info.sizes != act_info.sizes || result.sizes != act_info.sizes)
      continue;
    n.target = "ingot::silu_mul";
    n.args = {ir::TensorRef{gate_of[size_t(act)]}, ir::TensorRef{up}};
    drop[silu_node[size_t(act)]] = true;
    gate_of[size_t(act)] = -1;
    ++count;
  }
  if (count > 0) {
    // The fused silus are gone: their one use was the mul. (Not left to dead-code
    // elimination, which keeps a node whose output sizes hold a symbol: the gate that
    // feeds silu_mul has the same sizes, so nothing else binds through it.)
    std::vector<ir::Node> kept;
    for (size_t i = 0; i < graph->nodes().size(); ++i)
      if (!drop[i]) kept.push_back(std::move(graph->mutable_nodes()[i]));
    graph->mutable_nodes() = std::move(kept);
    out.graph = graph;
    out.verify();
  }
  if (fused) *fused = count;
  return out;
}

int FuseSiluMulPass::run(ExportedProgram& program, const PassTarget&) {
  int fused = 0;
  program = fuse_silu_mul(program, &fused);
  return fused;
}

}  // namespace ingot::runtime
