// Tensor-level matrix products on top of cpu::gemm: batched loops, batch folding and the
// dtypes gemm does not cover (f64 and integers, by a plain loop).
#pragma once

#include "ingot/core/tensor.h"

namespace ingot::cpu {

// out[..., n, p] = alpha * a[..., n, k] · b[..., k, p] + beta * out, for tensors of one
// dtype whose batch dims (all but the last two) are equal (broadcast operands arrive
// expanded, with stride 0). `out` has unit stride in its last dim. beta == 0 ignores the
// old contents of out (NaN included). Batch dims of `a` that are laid out like rows
// (the linear case, a[b, s, k] · W^T) are folded into one big m.
void matmul_into(const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1.0,
                 double beta = 0.0);

}  // namespace ingot::cpu
