// AVX-512 SiLU (and SiLU * up) kernels: 16 floats per step, exp by exp512. Every function
// carries the target attribute; silu_mul (activation.cpp) calls in only after
// avx512_available().
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's AVX-512 headers
#endif

#include <limits>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/activation.h"
#include "ingot/ops/cpu/avx512_math.h"

namespace ingot::cpu::activation {
namespace {

// silu(g) = g / (1 + exp(-g)), as the scalar formula: exp(-g) overflows to inf for
// g < -88.72 (exp512 saturates there, so it is set explicitly), giving -0 for a finite g
// and NaN for g = -inf, as torch.
INGOT_AVX512_MATH inline __m512 silu16(__m512 g) {
  const __m512 neg = _mm512_sub_ps(_mm512_setzero_ps(), g);
  const __mmask16 overflow = _mm512_cmp_ps_mask(neg, _mm512_set1_ps(88.72283f), _CMP_GT_OQ);
  const __m512 e = _mm512_mask_mov_ps(exp512(neg), overflow,
                                      _mm512_set1_ps(std::numeric_limits<float>::infinity()));
  return _mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

}  // namespace

bool avx512_available() {
  return cpu_features().avx512_kernels();
}

INGOT_AVX512_MATH void silu_mul_f32_avx512(float* out, const float* gate, const float* up,
                                           int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask16(n - i);
    __m512 y = silu16(_mm512_maskz_loadu_ps(m, gate + i));
    if (up) y = _mm512_mul_ps(y, _mm512_maskz_loadu_ps(m, up + i));
    _mm512_mask_storeu_ps(out + i, m, y);
  }
}

INGOT_AVX512_MATH void silu_mul_bf16_avx512(uint16_t* out, const uint16_t* gate, const uint16_t* up,
                                            int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask16(n - i);
    __m512 y = silu16(load_bf16x16(gate + i, m));
    if (up) y = _mm512_mul_ps(y, load_bf16x16(up + i, m));
    store_bf16x16(out + i, y, m);
  }
}

}  // namespace ingot::cpu::activation
