// Matrix products with ATen semantics: mm, bmm, addmm, matmul (NumPy broadcasting, 1-D
// operands), linear. Operands must share one dtype (f32/bf16/f16 accumulate in f32;
// f64 and integer dtypes use a plain loop).
#pragma once

#include <source_location>
#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

// [n, k] · [k, p] -> [n, p]
Tensor mm(const Tensor& self, const Tensor& mat2,
    std::source_location where = std::source_location::current());
// [b, n, k] · [b, k, p] -> [b, n, p]
Tensor bmm(const Tensor& self, const Tensor& mat2,
    std::source_location where = std::source_location::current());
// beta * self + alpha * (mat1 · mat2); self broadcasts to [n, p]; beta == 0 ignores self.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1,
             Scalar alpha = 1,
    std::source_location where = std::source_location::current());
// torch.matmul: dot (1-D·1-D), mv, mm, and batched products with broadcast batch dims.
Tensor matmul(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
// input[..., in] · weight[out, in]^T (+ bias[out]) -> [..., out]; bias may be undefined.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
    std::source_location where = std::source_location::current());

// ---- f32 linears on weights packed once (runtime/passes/packed_linear_weights.h) ----
// weight [out, in] f32 rearranged as panels of `width` rows (ops/cpu/gemm.h PanelWeight):
// [ceil(out / width), in, width].
Tensor pack_linear_weight(const Tensor& weight, int64_t width);
// The width the CPU kernels read packed weights at without conversion; 0 when they have
// no fast path for them (cpu::gemm_panel_width()).
int64_t packed_linear_width();
// == linear(input, weight, bias) for panels = pack_linear_weight(weight, width) and
// out_features = weight.size(0); input, panels and bias f32.
Tensor packed_linear(const Tensor& input, const Tensor& panels, const Tensor& bias,
                     int64_t out_features,
    std::source_location where = std::source_location::current());

}  // namespace ingot
