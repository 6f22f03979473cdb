// backend="xnnpack": which nodes XNNPACK runs, and how each becomes XNNPACK nodes of a
// partition (xnnpack_partition.h gathers them into one DelegateCall). float32 only; a node
// with another dtype, a non-constant weight, or parameters XNNPACK cannot express stays
// on the portable kernels.
//
// Anchors (open a partition):
//   linear(x, W, b?)     W [n, k], b [n] constants         -> FullyConnected (no bias: a
//                                                             zero constant)
//   mm(a, b), bmm(a, b)  (a constant operand is defined in the subgraph) -> BatchMatrixMultiply
//   convolution(x, W, b?, stride, padding, dilation, groups), W / b constants:
//     2-D  x [N, C, H, W]: transpose to NHWC -> Conv2d (DepthwiseConv2d when each group
//          has one input channel) with W as [O, kh, kw, C/g] ([1, kh, kw, O]) -> transpose
//          back to NCHW
//     1-D  x [N, C, L]: transpose to [N, L, C] -> reshape [N, 1, L, C] -> the 2-D
//          convolution over a unit height -> reshape [N, L', O] -> transpose to [N, O, L'].
//          XNNPACK's static reshape infers one dim at most, so N and L are not both
//          dynamic (such a conv1d stays portable).
// Joining an open partition (elementwise, NumPy broadcasting):
//   add.Tensor / sub.Tensor (alpha 1), mul.Tensor, div.Tensor  -> Add / Subtract / Multiply / Div
//   (both operands computed values: a static operand crashes ExecuTorch 1.5.1's XNNPACK
//   runtime, so `x * 0.5` or `x + bias_constant` stays portable)
//   relu -> Clamp [0, inf); clamp(x, min?, max?) -> Clamp; sigmoid, tanh, neg -> Sigmoid,
//   Tanh, Negate; gelu (approximate 'none': erf) -> Gelu; silu -> x * Sigmoid(x);
//   ingot::silu_mul(g, u) -> g * Sigmoid(g) * u; softmax over the last dim -> Softmax
// Weights are copied into the delegate's payload (the payload owns its constant data), so
// they are not in the program's constant segment as well.
#pragma once

#include <string>

#include "ingot/exporters/executorch/kernels.h"

namespace ingot::exporters::executorch::xnnpack {

class Partition;

constexpr const char* kBackendId = "XnnpackBackend";  // the id the runtime registers

// linear / mm / bmm / convolution.
bool is_anchor(const std::string& op);

// Adds the node of `k` to `p` as XNNPACK nodes when it is one of the above with float32
// operands and parameters XNNPACK expresses; false (nothing added) otherwise.
bool lower_node(KernelContext& k, Partition& p);

}  // namespace ingot::exporters::executorch::xnnpack
