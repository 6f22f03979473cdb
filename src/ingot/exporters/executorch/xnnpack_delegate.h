// backend="xnnpack": the partitioner. Each node XNNPACK can run on float32 tensors becomes
// its own XNNPACK subgraph (xnnpack_payload.h) called through a DelegateCall instruction
// (args: the node's non-constant tensor inputs, then its output); every other node stays a
// portable kernel call. Lowered today:
//   linear(x, W, b?)  W [n, k] (and b [n]) program constants -> XNNFullyConnected
//                     (a missing bias is a zero constant)
//   mm(a, b), bmm(a, b)                                     -> XNNBatchMatrixMultiply
//                     (a constant operand is defined inside the subgraph)
// Weights are copied into the delegate's payload (the payload owns its constant data), so
// they are not in the program's constant segment as well.
#pragma once

#include "ingot/exporters/executorch/kernels.h"

namespace ingot::exporters::executorch::xnnpack {

// Emits the node of `k` as an XNNPACK delegate call when it is one of the above with
// float32 operands; false (nothing emitted) otherwise.
bool lower_to_delegate(KernelContext& k);

}  // namespace ingot::exporters::executorch::xnnpack
