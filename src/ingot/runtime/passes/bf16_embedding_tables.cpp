#include "ingot/runtime/passes/bf16_embedding_tables.h"

#include <memory>
#include <numeric>

#include "ingot/ir/rewrite.h"
#include "ingot/ops/functional.h"

namespace ingot::runtime {
namespace {

// True when every value of the contiguous f32 tensor `t` is a bf16 value (low 16 bits 0).
bool bf16_exact(const Tensor& t) {
  const auto* bits = static_cast<const uint32_t*>(t.raw_data());
  const int64_t n = t.numel();
  uint32_t low = 0;
  for (int64_t i = 0; i < n; ++i) low |= bits[i] & 0xFFFFu;
  return low == 0;
}

using ir::tensor_arg;

}  // namespace

ExportedProgram Bf16EmbeddingTables::apply(const ExportedProgram& program) {
  ExportedProgram out = program;
  const ir::Graph& g = *program.graph;
  // Uses of each value other than as an embedding's weight (nodes and graph outputs).
  std::vector<int> other_uses = ir::use_counts(g);
  for (const ir::Node& n : g.nodes())
    if (const ir::TensorRef* w = tensor_arg(n, 0); n.target == "embedding" && w)
      --other_uses[size_t(w->id)];

  // The placeholders to convert: state or constant tables read by embedding alone.
  std::vector<bool> convert(g.num_values(), false);
  bool any = false;
  for (size_t i = 0; i < program.signature.inputs.size(); ++i) {
    const InputSpec& in = program.signature.inputs[i];
    if (in.kind == InputKind::UserInput || other_uses[size_t(g.inputs[i])] != 0) continue;
    auto& tensors = in.kind == InputKind::ConstantTensor ? out.constants : out.state;
    auto it = tensors.find(in.target);
    if (it == tensors.end()) continue;
    const Tensor& table = it->second;
    if (table.dtype() != DType::F32 || table.dim() != 2 || table.numel() < min_elements_ ||
        !table.is_contiguous() || !table.has_storage())
      continue;
    // Each storage is scanned once, whatever the verdict (prefill and decode share it).
    auto [copy, first] = copies_.try_emplace(table.storage().get());
    if (first && bf16_exact(table)) copy->second = contiguous(to(table, DType::BF16));
    if (!copy->second.defined()) continue;
    it->second = copy->second;
    convert[size_t(g.inputs[i])] = true;
    any = true;
  }
  if (!any) return out;

  auto graph = std::make_shared<ir::Graph>(g);
  for (size_t v = 0; v < convert.size(); ++v)
    if (convert[v]) graph->mutable_value(ir::ValueId(v)).dtype = DType::BF16;

  // Each lookup of a converted table: embedding(table, ids) -> [.., hidden] bf16, then a
  // new _to_copy node -> [.., hidden] f32; the nodes after it (and the graph outputs) read
  // the f32 value wherever they read the lookup's output (`renamed`).
  std::vector<ir::Node> nodes;
  std::vector<ir::ValueId> renamed(graph->num_values());
  std::iota(renamed.begin(), renamed.end(), ir::ValueId(0));
  for (ir::Node& n : graph->mutable_nodes()) {
    for (ir::Argument& a : n.args) {
      if (auto* r = std::get_if<ir::TensorRef>(&a)) r->id = renamed[size_t(r->id)];
      if (auto* l = std::get_if<ir::OptionalValueList>(&a))
        for (auto& id : *l)
          if (id) id = renamed[size_t(*id)];
    }
    const ir::TensorRef* w = tensor_arg(n, 0);
    const bool converted_lookup = n.target == "embedding" && w && convert[size_t(w->id)];
    nodes.push_back(std::move(n));
    if (!converted_lookup) continue;
    const ir::ValueId gathered = nodes.back().outputs.at(0);
    graph->mutable_value(gathered).dtype = DType::BF16;
    const ir::ValueInfo info = graph->value(gathered);
    const ir::ValueId as_f32 = graph->add_tensor_value(info.name + "_f32", DType::F32, info.sizes);
    ir::Node cast;
    cast.target = "_to_copy";
    cast.args = {ir::TensorRef{gathered}, DType::F32};
    cast.outputs = {as_f32};
    cast.source = nodes.back().source;
    renamed.resize(graph->num_values());
    renamed[size_t(as_f32)] = as_f32;
    renamed[size_t(gathered)] = as_f32;
    nodes.push_back(std::move(cast));
  }
  for (ir::ValueId& v : graph->outputs) v = renamed[size_t(v)];
  graph->mutable_nodes() = std::move(nodes);
  out.graph = graph;
  out.verify();
  return out;
}

int Bf16EmbeddingTablesPass::run(ExportedProgram& program, const PassTarget&) {
  const int before = tables_.converted();
  ExportedProgram out = tables_.apply(program);
  program = std::move(out);
  return tables_.converted() - before;
}

}  // namespace ingot::runtime
