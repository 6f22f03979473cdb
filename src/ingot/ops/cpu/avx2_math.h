// AVX2 building blocks shared by the kernel files that carry the AVX2 target attribute
// (the library baseline stays generic x86-64; callers check cpu_features().avx2_kernels()
// first): exp with the accuracy of avx512_math.h's exp512, bf16 <-> float conversions
// bit-equal to core/half.h's scalar ones, tail masks and horizontal reductions.
// Loads and stores here never touch memory past the n elements they are given.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define INGOT_AVX2_MATH __attribute__((target("avx2,fma,f16c")))

namespace ingot::cpu {

// 2^k for integer lanes k in [-126, 127], built in the exponent field.
INGOT_AVX2_MATH inline __m256 pow2i256(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

// exp(x) to ~2 ulp, the same algorithm and constants as exp512: x = n ln2 + r,
// |r| <= ln2/2, exp(r) by the Cephes expf polynomial (1 + r + r^2 P(r)), scaled by 2^n.
// n spans [-150, 128], beyond one exponent field, so the scaling is two exact
// power-of-two multiplies 2^(n>>1) * 2^(n - (n>>1)) and only the last one rounds (into
// the subnormals when the result is that small), as vscalefps does.
// NaN propagates; x below -104 gives exactly 0 (so exp(-inf) == 0); x above 88.72
// gives the largest finite exp (3.4e38), not inf.
INGOT_AVX2_MATH inline __m256 exp256(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-104.0f);
  const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  // min/max return the second operand when one is NaN: keep x second.
  x = _mm256_min_ps(_mm256_set1_ps(88.72283f), x);
  x = _mm256_max_ps(lo, x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 poly = _mm256_set1_ps(1.9875691500e-4f);
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(1.3981999507e-3f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(8.3334519073e-3f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(4.1665795894e-2f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(1.6666665459e-1f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 y = _mm256_fmadd_ps(poly, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i ni = _mm256_cvtps_epi32(n);  // NaN lanes: any scale, y is NaN anyway
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256 e = _mm256_mul_ps(_mm256_mul_ps(y, pow2i256(n1)), pow2i256(n2));
  return _mm256_andnot_ps(underflow, e);
}

// Lane i is all ones when i < n (n may be negative or above 8), for maskload/maskstore.
INGOT_AVX2_MATH inline __m256i tail_mask8(int64_t n) {
  const int32_t k = n < 0 ? 0 : n > 8 ? 8 : int32_t(n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// 8 bf16 values widened to float.
INGOT_AVX2_MATH inline __m256 load_bf16x8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// 8 floats rounded to bf16 (nearest even; NaN stays a quiet NaN), as
// BFloat16::round_from_float.
INGOT_AVX2_MATH inline __m128i round_bf16x8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256i bits = _mm256_blendv_epi8(rounded, quiet, nan);  // every lane <= 0xffff
  return _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
}

INGOT_AVX2_MATH inline void store_bf16x8(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), round_bf16x8(v));
}

// The first n < 8 elements of p, zero-filled to 8, as raw 16-bit lanes (AVX2 has no
// masked 16-bit load); and the first n lanes of h stored to p.
INGOT_AVX2_MATH inline __m128i load_u16_partial(const uint16_t* p, int64_t n) {
  alignas(16) uint16_t buf[8] = {};
  std::memcpy(buf, p, size_t(n) * sizeof(uint16_t));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
}
INGOT_AVX2_MATH inline void store_u16_partial(uint16_t* p, __m128i h, int64_t n) {
  alignas(16) uint16_t buf[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(buf), h);
  std::memcpy(p, buf, size_t(n) * sizeof(uint16_t));
}

INGOT_AVX2_MATH inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

INGOT_AVX2_MATH inline float hmax256(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace ingot::cpu
