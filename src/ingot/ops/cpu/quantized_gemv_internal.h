// Row kernels behind quantized_matmul (quantized_gemv.h): one x row against rows
// [r0, r1) of a packed weight, written to y[r0..r1). Scalar and AVX-512 versions compute
// the same sums (per group: sum of (q - z) * x, then times the group's scale).
#pragma once

#include "ingot/ops/cpu/quantized_gemv.h"

#define INGOT_TARGET_AVX512_QUANT \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))

namespace ingot::cpu::detail {

void quantized_gemv_rows_scalar(const float* x, const PackedWeight& w, int64_t r0, int64_t r1,
                                float* y);
// The AVX-512 4-bit kernel reads x with each 32-block reordered to [even k, odd k]:
// out[c + j] = x[c + 2j], out[c + 16 + j] = x[c + 2j + 1] (k % 32 == 0).
void permute_int4_activations(const float* x, int64_t k, float* out);
// bits 4: x permuted by permute_int4_activations.
void quantized_gemv_rows_avx512(const float* x, const PackedWeight& w, int64_t r0, int64_t r1,
                                float* y);
void dequantize_rows_scalar(const PackedWeight& w, int64_t r0, int64_t r1, float* out);
void dequantize_rows_avx512(const PackedWeight& w, int64_t r0, int64_t r1, float* out);

}  // namespace ingot::cpu::detail
