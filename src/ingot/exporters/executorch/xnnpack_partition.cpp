#include "ingot/exporters/executorch/xnnpack_partition.h"

#include "ingot/exporters/executorch/emitter_internal.h"
#include "ingot/exporters/executorch/xnnpack_delegate.h"

namespace ingot::exporters::executorch::xnnpack {

Partition::Partition(Emitter& e, const ir::Graph& g) : e_(e) {
  for (const ir::Node& n : g.nodes())
    for (ir::ValueId id : ir::Graph::node_inputs(n)) ++uses_[id];
  graph_inputs_.insert(g.inputs.begin(), g.inputs.end());
  graph_outputs_.insert(g.outputs.begin(), g.outputs.end());
}

bool Partition::add(KernelContext& k) {
  if (!open() && !is_anchor(k.node().target)) return false;
  if (!lower_node(k, *this)) return false;
  nodes_.push_back(&k.node());
  for (ir::ValueId id : ir::Graph::node_inputs(k.node())) ++inside_uses_[id];
  return true;
}

void Partition::before(const ir::Node& n) {
  if (!open()) return;
  for (ir::ValueId id : ir::Graph::node_inputs(n)) {
    if (result_ids_.contains(id)) {
      close();
      return;
    }
  }
  if (reads_graph_input_) {
    for (ir::ValueId id : n.outputs) {
      if (graph_outputs_.contains(id)) {
        close();
        return;
      }
    }
  }
}

uint32_t Partition::operand(KernelContext& k, size_t arg) {
  const int32_t v = k.tensor(arg);
  if (auto it = ids_.find(v); it != ids_.end()) return it->second;
  uint32_t id;
  if (const Tensor* c = k.constant(arg)) {
    id = g_.constant(*c);
  } else {
    id = g_.input(k.bound_sizes(v));
    input_args_.push_back(v);
    const ir::ValueId gv = std::get<ir::TensorRef>(k.node().args.at(arg)).id;
    if (graph_inputs_.contains(gv)) reads_graph_input_ = true;
  }
  ids_[v] = id;
  return id;
}

uint32_t Partition::result(KernelContext& k, size_t out) {
  const int32_t v = k.out(out);
  const uint32_t id = g_.internal(k.bound_sizes(v));
  ids_[v] = id;
  const ir::ValueId gv = k.node().outputs.at(out);
  results_.push_back({gv, v});
  result_ids_.insert(gv);
  return id;
}

void Partition::close() {
  if (!open()) return;
  // The results read outside the partition (or returned) are its outputs; the others
  // stay XNNPACK-internal and leave the memory plan.
  std::vector<int32_t> args = input_args_;
  for (const auto& [gv, v] : results_) {
    const auto inside = inside_uses_.find(gv);
    const int inside_reads = inside == inside_uses_.end() ? 0 : inside->second;
    const auto all = uses_.find(gv);
    const int reads = all == uses_.end() ? 0 : all->second;
    if (graph_outputs_.contains(gv) || reads > inside_reads) {
      g_.mark_output(ids_.at(v));
      args.push_back(v);
    } else {
      e_.unplan(v);
    }
  }
  if (g_.num_outputs() > 0) {
    const ir::Node* was = e_.current_node();
    e_.set_current_node(nodes_.back());  // the call's stack-trace frame: the last node
    e_.delegate_call(kBackendId, g_.finish(), args);
    e_.set_current_node(was);
  }
  g_ = GraphBuilder();
  nodes_.clear();
  ids_.clear();
  input_args_.clear();
  results_.clear();
  result_ids_.clear();
  inside_uses_.clear();
  reads_graph_input_ = false;
}

}  // namespace ingot::exporters::executorch::xnnpack
