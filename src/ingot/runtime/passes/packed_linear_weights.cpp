#include "ingot/runtime/passes/packed_linear_weights.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <string_view>

#include "ingot/ir/rewrite.h"
#include "ingot/ops/functional.h"

namespace ingot::runtime {
namespace {

using ir::tensor_arg;

// A `linear` node this rewrite can take: input and weight as tensors, no bias or a 1-D
// one as long as the weight's rows (packed_linear takes no broadcasting bias).
bool is_linear(const ir::Graph& g, const ir::Node& n) {
  if (n.target != "linear" || n.outputs.size() != 1 || n.args.size() < 2 || n.args.size() > 3 ||
      !tensor_arg(n, 0) || !tensor_arg(n, 1))
    return false;
  const ir::TensorRef* bias = tensor_arg(n, 2);
  if (!bias) return n.args.size() == 2 || std::holds_alternative<std::monostate>(n.args[2]);
  const ir::SymShape& b = g.value(bias->id).sizes;
  const ir::SymShape& w = g.value(tensor_arg(n, 1)->id).sizes;
  return b.size() == 1 && w.size() == 2 && b[0] == w[0];
}

// MemAvailable of /proc/meminfo in bytes; -1 when it cannot be read (not Linux).
int64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return -1;
}

}  // namespace

PackedLinearWeights::PackedLinearWeights(int64_t min_elements, std::optional<int64_t> budget_bytes)
    : min_elements_(min_elements) {
  if (budget_bytes) {
    budget_bytes_ = *budget_bytes;
    return;
  }
  const int64_t available = available_memory_bytes();
  budget_bytes_ = available < 0 ? std::numeric_limits<int64_t>::max()
                                : available - std::max<int64_t>(int64_t(1) << 30, available / 10);
}

ExportedProgram PackedLinearWeights::apply(const ExportedProgram& program) {
  ExportedProgram out = program;
  const int64_t width = packed_linear_width();
  if (width == 0) return out;
  const ir::Graph& g = *program.graph;
  // Uses of each value other than as a linear's weight (nodes and graph outputs).
  std::vector<int> other_uses = ir::use_counts(g);
  for (const ir::Node& n : g.nodes())
    if (is_linear(g, n)) --other_uses[size_t(tensor_arg(n, 1)->id)];

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
    if (w.dtype() != DType::F32 || w.dim() != 2 || w.numel() < min_elements_ || !w.has_storage())
      continue;
    const std::tuple<const Storage*, int64_t, int64_t, int64_t> key{
        w.storage().get(), w.storage_offset(), w.size(0), w.size(1)};
    auto slot = panels_.find(key);
    if (slot == panels_.end()) {
      // The packed copy and the weight are in memory together until the caller drops the
      // weight: stop packing before that could run the machine out of memory.
      const int64_t bytes = (w.size(0) + width - 1) / width * w.size(1) * width * 4;
      if (bytes > budget_bytes_) continue;
      budget_bytes_ -= bytes;
      slot = panels_.emplace(key, pack_linear_weight(w, width)).first;
    }
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
    if (!is_linear(g, n) || !panels_of[size_t(tensor_arg(n, 1)->id)].defined()) continue;
    const int64_t features = out_features[size_t(tensor_arg(n, 1)->id)];
    n.target = "ingot::packed_linear";
    if (n.args.size() == 2) n.args.emplace_back(std::monostate{});  // no bias: None
    n.args.push_back(sym::integer(features));
  }
  out.graph = graph;
  out.verify();
  return out;
}

int PackedLinearWeightsPass::run(ExportedProgram& program, const PassTarget&) {
  const int before = panels_.packed();
  ExportedProgram out = panels_.apply(program);
  program = std::move(out);
  return panels_.packed() - before;
}

}  // namespace ingot::runtime
