// AVX2 SiLU (and SiLU * up) kernels: 8 floats per step, exp by exp256 (the accuracy of
// the AVX-512 path). Every function carries the target attribute; silu_mul
// (activation.cpp) calls in only after avx2_available(). Tails shorter than 8 go through
// masked float loads / stores or a zero-filled 8-element copy for bf16, so nothing is
// read or written past element n.
#include <limits>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/activation.h"
#include "ingot/ops/cpu/avx2_math.h"

namespace ingot::cpu::activation {
namespace {

// silu(g) = g / (1 + exp(-g)), as the scalar formula: exp(-g) overflows to inf for
// g < -88.72 (exp256 saturates there, so it is set explicitly), giving -0 for a finite g
// and NaN for g = -inf, as torch.
INGOT_AVX2_MATH inline __m256 silu8(__m256 g) {
  const __m256 neg = _mm256_sub_ps(_mm256_setzero_ps(), g);
  const __m256 overflow = _mm256_cmp_ps(neg, _mm256_set1_ps(88.72283f), _CMP_GT_OQ);
  const __m256 e = _mm256_blendv_ps(
      exp256(neg), _mm256_set1_ps(std::numeric_limits<float>::infinity()), overflow);
  return _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

INGOT_AVX2_MATH inline __m256 widen_bf16(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

}  // namespace

bool avx2_available() {
  return cpu_features().avx2_kernels();
}

INGOT_AVX2_MATH void silu_mul_f32_avx2(float* out, const float* gate, const float* up, int64_t n) {
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8) {
    __m256 y = silu8(_mm256_loadu_ps(gate + i));
    if (up) y = _mm256_mul_ps(y, _mm256_loadu_ps(up + i));
    _mm256_storeu_ps(out + i, y);
  }
  if (n8 < n) {
    const __m256i m = tail_mask8(n - n8);
    __m256 y = silu8(_mm256_maskload_ps(gate + n8, m));
    if (up) y = _mm256_mul_ps(y, _mm256_maskload_ps(up + n8, m));
    _mm256_maskstore_ps(out + n8, m, y);
  }
}

INGOT_AVX2_MATH void silu_mul_bf16_avx2(uint16_t* out, const uint16_t* gate, const uint16_t* up,
                                        int64_t n) {
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8) {
    __m256 y = silu8(load_bf16x8(gate + i));
    if (up) y = _mm256_mul_ps(y, load_bf16x8(up + i));
    store_bf16x8(out + i, y);
  }
  if (n8 < n) {
    __m256 y = silu8(widen_bf16(load_u16_partial(gate + n8, n - n8)));
    if (up) y = _mm256_mul_ps(y, widen_bf16(load_u16_partial(up + n8, n - n8)));
    store_u16_partial(out + n8, round_bf16x8(y), n - n8);
  }
}

}  // namespace ingot::cpu::activation
