// What every graph rewrite needs (the export quantizer, the runtime's load-time passes):
// a node's tensor arguments, how often each value is read, and removing parameters no
// node reads any more.
#pragma once

#include <set>
#include <vector>

#include "ingot/ir/graph.h"
#include "ingot/ir/program.h"

namespace ingot::ir {

// Argument `i` of `n` as a tensor reference; null when absent or not a tensor.
inline const TensorRef* tensor_arg(const Node& n, size_t i) {
  return i < n.args.size() ? std::get_if<TensorRef>(&n.args[i]) : nullptr;
}

// Reads of every value of `g` (indexed by ValueId) by nodes, subgraphs included, and by
// the graph's outputs.
std::vector<int> use_counts(const Graph& g);

}  // namespace ingot::ir

namespace ingot {

// Removes the placeholders `values` (parameters, buffers, constants) from `program`'s
// graph inputs and signature, and their tensors from its state / constants unless another
// input still names them. The caller has rewritten every node that read them.
void remove_inputs(ExportedProgram& program, const std::set<ir::ValueId>& values);

}  // namespace ingot
