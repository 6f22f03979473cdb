// backend="xnnpack": the partitioner. While the emitter walks a graph's nodes in order, the
// nodes XNNPACK can run (xnnpack_delegate.h) are gathered into one open partition, an
// XNNPACK subgraph, and emitted as ONE DelegateCall when the partition closes: its
// arguments are the partition's external inputs (values made before it, by portable
// kernels or graph inputs), then its external outputs (the results something outside
// reads); every other result is an internal XNNPACK value with no ExecuTorch memory.
//
// Invariants (why the chain stays a valid order, with no cycle through portable nodes):
//  * A partition opens at an anchor node (linear, mm, bmm, convolution); elementwise nodes
//    only join an open one (XNNPACK add / mul / activations between two matmuls).
//  * The delegate call is emitted where the partition closes, after every portable node
//    met while it was open. Those nodes never read a partition result: a node that does
//    closes the partition first (before()), so each input of the partition was computed
//    before the call and each result is computed before its first outside reader.
//  * A portable node writing a graph output closes a partition that reads a graph input
//    (the in-place decode layout binds an output's memory onto an input's: the reads of
//    the old value must come first, as in the graph's order).
//  * Control-flow nodes and the end of the graph close it (each subgraph gets its own).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "ingot/exporters/executorch/kernels.h"
#include "ingot/exporters/executorch/xnnpack_payload.h"
#include "ingot/ir/graph.h"

namespace ingot::exporters::executorch {
class Emitter;
}

namespace ingot::exporters::executorch::xnnpack {

class Partition {
 public:
  Partition(Emitter& e, const ir::Graph& g);

  // Adds the node of `k` (its outputs already plan tensors) to the open partition, or
  // opens one when it is an anchor; false (nothing changed) when XNNPACK does not take it.
  bool add(KernelContext& k);
  // `n` is emitted as portable kernels next: closes the partition first when `n` reads
  // one of its results (or writes a graph output while the partition reads a graph input).
  void before(const ir::Node& n);
  // Emits the open partition's DelegateCall (nothing when none is open).
  void close();
  bool open() const { return !nodes_.empty(); }

  // --- for the node lowerings (xnnpack_delegate.cpp) ---
  GraphBuilder& graph() { return g_; }
  // The XNNPACK value of tensor argument `arg`: a result of the partition, a constant, or
  // (first use) a new external input.
  uint32_t operand(KernelContext& k, size_t arg);
  // The XNNPACK value holding output `out` of the node (internal until the partition
  // closes and finds an outside reader).
  uint32_t result(KernelContext& k, size_t out = 0);

 private:
  Emitter& e_;
  std::map<ir::ValueId, int> uses_;  // readers of each value in the graph (args)
  std::set<ir::ValueId> graph_inputs_, graph_outputs_;

  // The open partition.
  GraphBuilder g_;
  std::vector<const ir::Node*> nodes_;
  std::map<int32_t, uint32_t> ids_;  // plan value -> XNNPACK value
  std::vector<int32_t> input_args_;  // plan values of the external inputs, in order
  std::vector<std::pair<ir::ValueId, int32_t>> results_;  // (graph value, plan value)
  std::set<ir::ValueId> result_ids_;
  std::map<ir::ValueId, int> inside_uses_;  // readers among the partition's nodes
  bool reads_graph_input_ = false;
};

}  // namespace ingot::exporters::executorch::xnnpack
