// AVX-512 building blocks shared by the kernel files that carry the AVX-512 target
// attribute (the library baseline stays generic x86-64; callers check
// cpu_features().avx512_kernels() first): exp, and bf16 <-> float conversions bit-equal
// to core/half.h's scalar ones.
#pragma once

#include <immintrin.h>

#include <cstdint>

#define INGOT_AVX512_MATH __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))

namespace ingot::cpu {

// exp(x) to ~2 ulp: x = n ln2 + r, |r| <= ln2/2, exp(r) by the degree-7 minimax
// polynomial of the Cephes expf (1 + r + r^2 P(r)), scaled by 2^n with vscalefps.
// NaN propagates; x below -104 gives exactly 0 (so exp(-inf) == 0); x above 88.72
// gives the largest finite exp (3.4e38), not inf.
INGOT_AVX512_MATH inline __m512 exp512(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-104.0f);
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
  // min/max return the second operand when one is NaN: keep x second.
  x = _mm512_min_ps(_mm512_set1_ps(88.72283f), x);
  x = _mm512_max_ps(lo, x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 poly = _mm512_set1_ps(1.9875691500e-4f);
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(1.3981999507e-3f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(8.3334519073e-3f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(4.1665795894e-2f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(1.6666665459e-1f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __m512 y = _mm512_fmadd_ps(poly, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_mask_mov_ps(_mm512_scalef_ps(y, n), underflow, _mm512_setzero_ps());
}

// 16 bf16 values (masked) widened to float.
INGOT_AVX512_MATH inline __m512 load_bf16x16(const uint16_t* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// 16 floats rounded to bf16 (nearest even; NaN stays a quiet NaN), as
// BFloat16::round_from_float, stored under mask m.
INGOT_AVX512_MATH inline void store_bf16x16(uint16_t* p, __m512 v, __mmask16 m) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  const __m512i bits = _mm512_mask_mov_epi32(rounded, nan, quiet);
  _mm256_mask_storeu_epi16(p, m, _mm512_cvtepi32_epi16(bits));
}

INGOT_AVX512_MATH inline __mmask16 tail_mask16(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u);
}

}  // namespace ingot::cpu
