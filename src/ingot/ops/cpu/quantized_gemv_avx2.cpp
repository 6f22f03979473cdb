// AVX2 + FMA row kernels of quantized_matmul with f32 activations (QuantActivations::Float),
// the 8-lane counterparts of quantized_gemv_avx512.cpp: per 8 weights, widen the bytes (or
// nibbles) to int32, subtract the zero point (exact), convert to f32 and FMA with x; each
// group's partial sums are scaled once. Only reached after the run-time CPU check.
#include <immintrin.h>

#include <cstring>

#include "ingot/ops/cpu/avx2_math.h"
#include "ingot/ops/cpu/quantized_gemv_internal.h"

namespace ingot::cpu::detail {

namespace {

// 8 bytes at p -> 8 f32 values (byte - z).
INGOT_TARGET_AVX2_QUANT inline __m256 widen8(const uint8_t* p, __m256i z) {
  const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(b, z));
}

// One row of an 8-bit weight: sum over groups of s_g * sum (q - z) * x.
INGOT_TARGET_AVX2_QUANT float row_int8(const float* x, const PackedWeight& w, int64_t r) {
  const uint8_t* row = w.q + r * w.k;
  const float* s = w.scales + r * w.groups();
  __m256 acc = _mm256_setzero_ps();
  float tail = 0.0f;
  for (int64_t g = 0; g < w.groups(); ++g) {
    const int z = w.zero(r, g);
    const __m256i zv = _mm256_set1_epi32(z);
    const int64_t c0 = g * w.group, c1 = c0 + w.group;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
           a3 = _mm256_setzero_ps();
    int64_t c = c0;
    for (; c + 32 <= c1; c += 32) {
      a0 = _mm256_fmadd_ps(widen8(row + c, zv), _mm256_loadu_ps(x + c), a0);
      a1 = _mm256_fmadd_ps(widen8(row + c + 8, zv), _mm256_loadu_ps(x + c + 8), a1);
      a2 = _mm256_fmadd_ps(widen8(row + c + 16, zv), _mm256_loadu_ps(x + c + 16), a2);
      a3 = _mm256_fmadd_ps(widen8(row + c + 24, zv), _mm256_loadu_ps(x + c + 24), a3);
    }
    for (; c + 8 <= c1; c += 8)
      a0 = _mm256_fmadd_ps(widen8(row + c, zv), _mm256_loadu_ps(x + c), a0);
    float part = 0.0f;
    for (; c < c1; ++c) part += float(int(row[c]) - z) * x[c];
    const __m256 sum = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    acc = _mm256_fmadd_ps(sum, _mm256_set1_ps(s[g]), acc);
    tail += part * s[g];
  }
  return hsum256(acc) + tail;
}

// One row of a 4-bit weight (group a multiple of 32). `xp` is x with each 32-block
// reordered to [even k..., odd k...] (permute_int4_activations): byte j of a block holds
// weights 2j (low nibble, meets xp[j]) and 2j + 1 (high nibble, meets xp[16 + j]).
INGOT_TARGET_AVX2_QUANT float row_int4(const float* xp, const PackedWeight& w, int64_t r) {
  const uint8_t* row = w.q + r * (w.k / 2);
  const float* s = w.scales + r * w.groups();
  const __m256i mask = _mm256_set1_epi32(0x0F);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (int64_t g = 0; g < w.groups(); ++g) {
    const __m256i zv = _mm256_set1_epi32(w.zero(r, g));
    const int64_t c0 = g * w.group;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t c = c0; c < c0 + w.group; c += 32) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c / 2));
      const __m256i b0 = _mm256_cvtepu8_epi32(bytes);                     // bytes 0..7
      const __m256i b1 = _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8));  // bytes 8..15
      const __m256i lo0 = _mm256_sub_epi32(_mm256_and_si256(b0, mask), zv);
      const __m256i lo1 = _mm256_sub_epi32(_mm256_and_si256(b1, mask), zv);
      const __m256i hi0 = _mm256_sub_epi32(_mm256_srli_epi32(b0, 4), zv);
      const __m256i hi1 = _mm256_sub_epi32(_mm256_srli_epi32(b1, 4), zv);
      a0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo0), _mm256_loadu_ps(xp + c), a0);
      a1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo1), _mm256_loadu_ps(xp + c + 8), a1);
      a0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(hi0), _mm256_loadu_ps(xp + c + 16), a0);
      a1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(hi1), _mm256_loadu_ps(xp + c + 24), a1);
    }
    const __m256 sv = _mm256_set1_ps(s[g]);
    acc0 = _mm256_fmadd_ps(a0, sv, acc0);
    acc1 = _mm256_fmadd_ps(a1, sv, acc1);
  }
  return hsum256(_mm256_add_ps(acc0, acc1));
}

}  // namespace

INGOT_TARGET_AVX2_QUANT void quantized_gemv_rows_avx2(const float* x, const PackedWeight& w,
                                                      int64_t r0, int64_t r1, float* y) {
  if (w.bits == 8) {
    for (int64_t r = r0; r < r1; ++r) y[r] = row_int8(x, w, r);
  } else {
    for (int64_t r = r0; r < r1; ++r) y[r] = row_int4(x, w, r);
  }
}

INGOT_TARGET_AVX2_QUANT void dequantize_rows_avx2(const PackedWeight& w, int64_t r0, int64_t r1,
                                                  float* out) {
  if (w.bits == 8 && w.group % 8 != 0) return dequantize_rows_scalar(w, r0, r1, out);
  const __m128i low = _mm_set1_epi8(0x0F);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.q + r * w.row_bytes();
    float* o = out + (r - r0) * w.k;
    for (int64_t g = 0; g < w.groups(); ++g) {
      const __m256i zv = _mm256_set1_epi32(w.zero(r, g));
      const __m256 sv = _mm256_set1_ps(w.scales[r * w.groups() + g]);
      const int64_t c0 = g * w.group, c1 = c0 + w.group;
      if (w.bits == 8) {
        for (int64_t c = c0; c < c1; c += 8)
          _mm256_storeu_ps(o + c, _mm256_mul_ps(widen8(row + c, zv), sv));
        continue;
      }
      // 4 bytes -> weights c .. c + 7 in order: interleave each byte's two nibbles.
      for (int64_t c = c0; c < c1; c += 8) {
        int32_t four;
        std::memcpy(&four, row + c / 2, 4);
        const __m128i bytes = _mm_cvtsi32_si128(four);
        const __m128i lo = _mm_and_si128(bytes, low);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low);
        const __m256i q = _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi));
        _mm256_storeu_ps(o + c, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, zv)), sv));
      }
    }
  }
}

}  // namespace ingot::cpu::detail
