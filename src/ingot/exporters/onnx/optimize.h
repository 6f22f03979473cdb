// The ONNX exporter's optimiser (OnnxConfig::optimize): folds shape computations whose
// inputs are known at export time, merges equal constants, and removes what nothing
// reads. The conformance tests run every model with and without it and require the same
// outputs from ONNX Runtime.
//
//  * Folding: a node of the shape-arithmetic ops (Shape of a value with a static shape,
//    Gather, Concat, Slice, Reshape, Unsqueeze, Squeeze, Cast, Add/Sub/Mul/Div, Min/Max,
//    comparisons, Not/And/Or, Where, Range, Expand, Identity) whose inputs are all
//    constants becomes a Constant, when the result is small (<= kMaxFoldedElements).
//  * Merging: Constant nodes with equal values (and small equal initializers) are one.
//  * Dead nodes: nodes none of whose outputs is read (by a node of any graph, or as a
//    graph output) are removed.
// Subgraphs (If / Loop bodies) are optimised too; their outer-scope reads keep values
// alive.
#pragma once

#include <cstddef>

#include "ingot/exporters/onnx/model.h"

namespace ingot::exporters::onnx {

inline constexpr int64_t kMaxFoldedElements = 4096;

struct OptimizeStats {
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  size_t folded = 0;
  size_t merged = 0;
  size_t removed = 0;
};

OptimizeStats optimize(ModelProto& model);

// Number of nodes in the model's graphs (main graph and every subgraph).
size_t count_nodes(const ModelProto& model);

}  // namespace ingot::exporters::onnx
