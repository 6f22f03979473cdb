#include "ingot/runtime/passes/int8_embedding_tables.h"

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "ingot/ir/rewrite.h"

namespace ingot::runtime {
namespace {

// The graph input of the parameter (or buffer) named `target`, if the program has one.
std::optional<ir::ValueId> input_of(const ExportedProgram& p, const std::string& target) {
  for (size_t i = 0; i < p.signature.inputs.size(); ++i)
    if (p.signature.inputs[i].kind != InputKind::UserInput &&
        p.signature.inputs[i].target == target)
      return p.graph->inputs[i];
  return std::nullopt;
}

// Whether a quantized_linear of the graph reads (qweight, scales) as 8-bit weights: the
// rows are the lm_head the quantizer packed, not parameters that only share the names.
bool read_as_int8_linear(const ir::Graph& g, ir::ValueId qweight, ir::ValueId scales) {
  for (const ir::Node& n : g.nodes()) {
    const ir::TensorRef *q = ir::tensor_arg(n, 1), *s = ir::tensor_arg(n, 2);
    const sym::Expr* bits = n.args.size() > 5 ? std::get_if<sym::Expr>(&n.args[5]) : nullptr;
    if (n.target == "ingot::quantized_linear" && q && s && q->id == qweight &&
        s->id == scales && bits && bits->maybe_value() == 8)
      return true;
  }
  return false;
}

// The int8 rows the quantizer packed for the table `target` (<base>.weight, named as
// exporters/quantize.cpp names them): <base>.qweight uint8 [rows, dim] and <base>.scales
// f32 [rows, 1], no zero points, read by an 8-bit quantized_linear; nullopt otherwise.
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
  if (!qv || !sv || !read_as_int8_linear(*p.graph, *qv, *sv)) return std::nullopt;
  return Int8Rows{*qv, *sv};
}

}  // namespace

int read_embeddings_from_int8_rows(ExportedProgram& program) {
  const ir::Graph& g = *program.graph;
  // Uses of each value other than as an embedding's table (nodes and graph outputs).
  std::vector<int> other_uses = ir::use_counts(g);
  for (const ir::Node& n : g.nodes())
    if (const ir::TensorRef* w = ir::tensor_arg(n, 0); n.target == "embedding" && w)
      --other_uses[size_t(w->id)];

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
    const ir::TensorRef* w = ir::tensor_arg(n, 0);
    if (n.target != "embedding" || !w || !replace.contains(w->id)) continue;
    const Int8Rows& rows = replace.at(w->id);
    // embedding(W, ids, ...) -> quantized_embedding(W.qweight, W.scales, ids): the same
    // output value ([..., dim] f32).
    n.target = "ingot::quantized_embedding";
    n.args = {ir::TensorRef{rows.qweight}, ir::TensorRef{rows.scales}, n.args.at(1)};
    ++rewritten;
  }
  program.graph = graph;
  // The f32 tables leave the graph's inputs, the signature and the state.
  std::set<ir::ValueId> tables;
  for (const auto& [v, rows] : replace) tables.insert(v);
  remove_inputs(program, tables);
  program.verify();
  return rewritten;
}

}  // namespace ingot::runtime
