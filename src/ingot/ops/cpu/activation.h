// SiLU over contiguous rows, alone or fused with the multiply of a gated MLP:
//   silu(x)          = x * sigmoid(x) = x / (1 + exp(-x))
//   silu_mul(g, u)   = silu(g) * u     (one pass over memory instead of two)
// computed in float (bf16 inputs widened, the result rounded once to nearest even), with
// AVX-512 and AVX2 paths (exp to ~2 ulp) and a portable one, threaded over elements.
#pragma once

#include "ingot/core/tensor.h"

namespace ingot::cpu {

// out = silu(gate) (up undefined) or silu(gate) * up. gate, up and out contiguous, of
// one floating dtype (f32, bf16, f16, f64) and the same number of elements.
void silu_mul(const Tensor& out, const Tensor& gate, const Tensor& up);

namespace activation {
// The AVX-512 kernels (activation_avx512.cpp) over elements [0, n); up may be null.
bool avx512_available();
void silu_mul_f32_avx512(float* out, const float* gate, const float* up, int64_t n);
void silu_mul_bf16_avx512(uint16_t* out, const uint16_t* gate, const uint16_t* up, int64_t n);
// The AVX2 + FMA + F16C kernels (activation_avx2.cpp), used when AVX-512 is absent.
bool avx2_available();
void silu_mul_f32_avx2(float* out, const float* gate, const float* up, int64_t n);
void silu_mul_bf16_avx2(uint16_t* out, const uint16_t* gate, const uint16_t* up, int64_t n);
}  // namespace activation

}  // namespace ingot::cpu
