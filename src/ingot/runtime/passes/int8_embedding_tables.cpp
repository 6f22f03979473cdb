#include "ingot/runtime/passes/int8_embedding_tables.h"

#include <map>
#include <memory>
#include <optional>

namespace ingot::runtime {
namespace {

const ir::TensorRef* tensor_arg(const ir::Node& n, size_t i) {
  return i < n.args.size() ? std::get_if<ir::TensorRef>(&n.args[i]) : nullptr;
}

// The graph input of the parameter (or buffer) named `target`, if the program has one.
std::optional<ir::ValueId> input_of(const ExportedProgram& p, const std::string& target) {
  for (size_t i = 0; i < p.signature.inputs.size(); ++i)
    if (p.signature.inputs[i].kind != InputKind::UserInput &&
        p.signature.inputs[i].target == target)
      return p.graph->inputs[i];
  return std::nullopt;
}

// The int8 rows packed for the table `target` (<base>.weight): <base>.qweight uint8
// [rows, dim] and <base>.scales f32 [rows, 1], no zero points; nullopt when absent.
struct Int8Rows {
  ir::ValueId qweight, scales;
};
std::optional<Int8Rows> int8_rows_of(const ExportedProgram& p, const std::string& target,
                                     const Tensor& table) {
  if (!target.ends_with(".weight")) return std::nullopt;
  const std::string base = target.substr(0, target.size() - 7);
  auto q = p.state.find(base + ".qweight"), s = p.state.find(base + ".scales");
  if (q == p.state.end() || s == p.state.end() || p.state.contains(base + ".qzeros"))
    return std::nullopt;
  const Tensor &qt = q->second, &st = s->second;
  if (qt.dtype() != DType::U8 || qt.sizes() != table.sizes() || st.dtype() != DType::F32 ||
      st.sizes() != IntShape{table.size(0), 1})
    return std::nullopt;
  auto qv = input_of(p, base + ".qweight"), sv = input_of(p, base + ".scales");
  if (!qv || !sv) return std::nullopt;
  return Int8Rows{*qv, *sv};
}

}  // namespace

int read_embeddings_from_int8_rows(ExportedProgram& program) {
  const ir::Graph& g = *program.graph;
  // Uses of each value other than as an embedding's table (nodes and graph outputs).
  std::vector<int> other_uses(g.num_values(), 0);
  for (const ir::Node& n : g.nodes()) {
    for (ir::ValueId v : ir::Graph::node_inputs(n)) ++other_uses[size_t(v)];
    if (const ir::TensorRef* w = tensor_arg(n, 0); n.target == "embedding" && w)
      --other_uses[size_t(w->id)];
  }
  for (ir::ValueId v : g.outputs) ++other_uses[size_t(v)];

  // Tables to replace: f32 state read by embedding alone, with int8 rows beside them.
  std::map<ir::ValueId, Int8Rows> replace;
  for (size_t i = 0; i < program.signature.inputs.size(); ++i) {
    const InputSpec& in = program.signature.inputs[i];
    const ir::ValueId v = g.inputs[i];
    if (in.kind != InputKind::Parameter || other_uses[size_t(v)] != 0) continue;
    auto table = program.state.find(in.target);
    if (table == program.state.end() || table->second.dtype() != DType::F32 ||
        table->second.dim() != 2)
      continue;
    if (auto rows = int8_rows_of(program, in.target, table->second)) replace.emplace(v, *rows);
  }
  if (replace.empty()) return 0;

  auto graph = std::make_shared<ir::Graph>(g);
  int rewritten = 0;
  for (ir::Node& n : graph->mutable_nodes()) {
    const ir::TensorRef* w = tensor_arg(n, 0);
    if (n.target != "embedding" || !w || !replace.contains(w->id)) continue;
    const Int8Rows& rows = replace.at(w->id);
    // embedding(W, ids, ...) -> quantized_embedding(W.qweight, W.scales, ids): the same
    // output value ([..., dim] f32).
    n.target = "ingot::quantized_embedding";
    n.args = {ir::TensorRef{rows.qweight}, ir::TensorRef{rows.scales}, n.args.at(1)};
    ++rewritten;
  }
  // The f32 tables leave the graph's inputs, the signature and the state.
  for (size_t i = graph->inputs.size(); i-- > 0;) {
    if (!replace.contains(graph->inputs[i])) continue;
    const std::string target = program.signature.inputs[i].target;
    graph->inputs.erase(graph->inputs.begin() + long(i));
    program.signature.inputs.erase(program.signature.inputs.begin() + long(i));
    program.state.erase(target);
  }
  program.graph = graph;
  program.verify();
  return rewritten;
}

}  // namespace ingot::runtime
