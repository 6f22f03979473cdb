#include "ingot/runtime/packed_linear_weights.h"

#include <cstdlib>
#include <memory>
#include <string_view>

#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/functional.h"

namespace ingot::runtime {
namespace {

const ir::TensorRef* tensor_arg(const ir::Node& n, size_t i) {
  return i < n.args.size() ? std::get_if<ir::TensorRef>(&n.args[i]) : nullptr;
}

// A `linear` node this rewrite can take: input, weight and an optional bias as tensors.
bool is_linear(const ir::Node& n) {
  return n.target == "linear" && n.outputs.size() == 1 && n.args.size() >= 2 &&
         n.args.size() <= 3 && tensor_arg(n, 0) && tensor_arg(n, 1);
}

}  // namespace

ExportedProgram PackedLinearWeights::apply(const ExportedProgram& program) {
  ExportedProgram out = program;
  const char* env = std::getenv("INGOT_PACKED_WEIGHTS");
  const int64_t width = env && std::string_view(env) == "0" ? 0 : cpu::gemm_panel_width();
  if (width == 0) return out;
  const ir::Graph& g = *program.graph;
  // Uses of each value other than as a linear's weight (nodes and graph outputs).
  std::vector<int> other_uses(g.num_values(), 0);
  for (const ir::Node& n : g.nodes()) {
    for (ir::ValueId v : ir::Graph::node_inputs(n)) ++other_uses[size_t(v)];
    if (is_linear(n)) --other_uses[size_t(tensor_arg(n, 1)->id)];
  }
  for (ir::ValueId v : g.outputs) ++other_uses[size_t(v)];

  // The placeholders to pack: state or constant f32 matrices read as linear weights only.
  std::vector<Tensor> panels_of(g.num_values());  // defined: the value is packed
  bool any = false;
  for (size_t i = 0; i < program.signature.inputs.size(); ++i) {
    const InputSpec& in = program.signature.inputs[i];
    const ir::ValueId v = g.inputs[i];
    if (in.kind == InputKind::UserInput || other_uses[size_t(v)] != 0) continue;
    auto& tensors = in.kind == InputKind::ConstantTensor ? out.constants : out.state;
    auto it = tensors.find(in.target);
    if (it == tensors.end()) continue;
    const Tensor& w = it->second;
    if (w.dtype() != DType::F32 || w.dim() != 2 || w.numel() < min_elements_ ||
        !w.has_storage())
      continue;
    auto [slot, first] = panels_.try_emplace(
        {w.storage().get(), w.storage_offset(), w.size(0), w.size(1)});
    if (first) slot->second = pack_linear_weight(w, width);
    it->second = slot->second;
    panels_of[size_t(v)] = slot->second;
    any = true;
  }
  if (!any) return out;

  // [n, k] placeholders become [panels, k, width]; their linears packed_linear nodes
  // (input, panels, bias or None, n).
  auto graph = std::make_shared<ir::Graph>(g);
  std::vector<int64_t> out_features(g.num_values(), 0);
  for (size_t v = 0; v < panels_of.size(); ++v) {
    const Tensor& panels = panels_of[v];
    if (!panels.defined()) continue;
    ir::ValueInfo& info = graph->mutable_value(ir::ValueId(v));
    out_features[v] = info.sizes.at(0).value();
    info.sizes = {sym::integer(panels.size(0)), sym::integer(panels.size(1)),
                  sym::integer(panels.size(2))};
  }
  for (ir::Node& n : graph->mutable_nodes()) {
    if (!is_linear(n) || !panels_of[size_t(tensor_arg(n, 1)->id)].defined()) continue;
    const int64_t features = out_features[size_t(tensor_arg(n, 1)->id)];
    n.target = "ingot::packed_linear";
    if (n.args.size() == 2) n.args.emplace_back(std::monostate{});  // no bias: None
    n.args.push_back(sym::integer(features));
  }
  out.graph = graph;
  out.verify();
  return out;
}

}  // namespace ingot::runtime
