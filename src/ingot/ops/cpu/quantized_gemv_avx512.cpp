// AVX-512 row kernels of quantized_matmul. Per 16 weights: widen the bytes (or nibbles)
// to int32, subtract the zero point (exact), convert to f32 and FMA with x; each group's
// partial sums are scaled once. Only reached after the run-time CPU check.
#include <immintrin.h>

#include "ingot/ops/cpu/quantized_gemv_internal.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ingot::cpu::detail {

namespace {

// 16 bytes -> 16 f32 values (byte - z).
INGOT_TARGET_AVX512_QUANT inline __m512 widen(__m128i bytes, __m512i z) {
  return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), z));
}

// 16 packed bytes (32 nibbles, low first) -> weights 0..15 and 16..31 in order.
INGOT_TARGET_AVX512_QUANT inline void unpack_nibbles(__m128i b, __m128i& first, __m128i& second) {
  const __m128i mask = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(b, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), mask);
  first = _mm_unpacklo_epi8(lo, hi);
  second = _mm_unpackhi_epi8(lo, hi);
}

// One row of an 8-bit weight: sum over groups of s_g * sum (q - z) * x.
INGOT_TARGET_AVX512_QUANT float row_int8(const float* x, const PackedWeight& w, int64_t r) {
  const uint8_t* row = w.q + r * w.k;
  const float* s = w.scales + r * w.groups();
  __m512 acc = _mm512_setzero_ps();
  float tail = 0.0f;
  for (int64_t g = 0; g < w.groups(); ++g) {
    const int z = w.zero(r, g);
    const __m512i zv = _mm512_set1_epi32(z);
    const int64_t c0 = g * w.group, c1 = c0 + w.group;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
           a3 = _mm512_setzero_ps();
    int64_t c = c0;
    for (; c + 64 <= c1; c += 64) {
      a0 = _mm512_fmadd_ps(widen(_mm_loadu_si128((const __m128i*)(row + c)), zv),
                           _mm512_loadu_ps(x + c), a0);
      a1 = _mm512_fmadd_ps(widen(_mm_loadu_si128((const __m128i*)(row + c + 16)), zv),
                           _mm512_loadu_ps(x + c + 16), a1);
      a2 = _mm512_fmadd_ps(widen(_mm_loadu_si128((const __m128i*)(row + c + 32)), zv),
                           _mm512_loadu_ps(x + c + 32), a2);
      a3 = _mm512_fmadd_ps(widen(_mm_loadu_si128((const __m128i*)(row + c + 48)), zv),
                           _mm512_loadu_ps(x + c + 48), a3);
    }
    for (; c + 16 <= c1; c += 16)
      a0 = _mm512_fmadd_ps(widen(_mm_loadu_si128((const __m128i*)(row + c)), zv),
                           _mm512_loadu_ps(x + c), a0);
    float part = 0.0f;
    for (; c < c1; ++c) part += float(int(row[c]) - z) * x[c];
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
    acc = _mm512_fmadd_ps(sum, _mm512_set1_ps(s[g]), acc);
    tail += part * s[g];
  }
  return _mm512_reduce_add_ps(acc) + tail;
}

// One row of a 4-bit weight (group a multiple of 32). `xp` is x with each 32-block
// reordered to [even k..., odd k...] (permute_int4_activations), so the low and high
// nibbles of 16 bytes widened to int32 lanes meet their x values without a byte shuffle:
// one widening (the shuffle port) per 32 weights, the rest AND / shift / convert / FMA.
INGOT_TARGET_AVX512_QUANT float row_int4(const float* xp, const PackedWeight& w, int64_t r) {
  const uint8_t* row = w.q + r * (w.k / 2);
  const float* s = w.scales + r * w.groups();
  const __m512i mask = _mm512_set1_epi32(0x0F);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  for (int64_t g = 0; g < w.groups(); ++g) {
    const __m512i zv = _mm512_set1_epi32(w.zero(r, g));
    const int64_t c0 = g * w.group;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    for (int64_t c = c0; c < c0 + w.group; c += 32) {
      const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)(row + c / 2)));
      const __m512i lo = _mm512_sub_epi32(_mm512_and_si512(b, mask), zv);
      const __m512i hi = _mm512_sub_epi32(_mm512_srli_epi32(b, 4), zv);
      a0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo), _mm512_loadu_ps(xp + c), a0);
      a1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi), _mm512_loadu_ps(xp + c + 16), a1);
    }
    const __m512 sv = _mm512_set1_ps(s[g]);
    acc0 = _mm512_fmadd_ps(a0, sv, acc0);
    acc1 = _mm512_fmadd_ps(a1, sv, acc1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

}  // namespace

void permute_int4_activations(const float* x, int64_t k, float* out) {
  for (int64_t c = 0; c < k; c += 32) {
    for (int64_t j = 0; j < 16; ++j) {
      out[c + j] = x[c + 2 * j];
      out[c + 16 + j] = x[c + 2 * j + 1];
    }
  }
}

INGOT_TARGET_AVX512_QUANT void quantized_gemv_rows_avx512(const float* x, const PackedWeight& w,
                                                          int64_t r0, int64_t r1, float* y) {
  if (w.bits == 8) {
    for (int64_t r = r0; r < r1; ++r) y[r] = row_int8(x, w, r);
  } else {
    for (int64_t r = r0; r < r1; ++r) y[r] = row_int4(x, w, r);
  }
}

INGOT_TARGET_AVX512_QUANT void dequantize_rows_avx512(const PackedWeight& w, int64_t r0, int64_t r1,
                                                      float* out) {
  if (w.bits == 8 && w.k % 16 != 0) return dequantize_rows_scalar(w, r0, r1, out);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.q + r * w.row_bytes();
    float* o = out + (r - r0) * w.k;
    for (int64_t g = 0; g < w.groups(); ++g) {
      const __m512i zv = _mm512_set1_epi32(w.zero(r, g));
      const __m512 sv = _mm512_set1_ps(w.scales[r * w.groups() + g]);
      const int64_t c0 = g * w.group, c1 = c0 + w.group;
      if (w.bits == 8) {
        for (int64_t c = c0; c < c1; c += 16)
          _mm512_storeu_ps(
              o + c, _mm512_mul_ps(widen(_mm_loadu_si128((const __m128i*)(row + c)), zv), sv));
      } else {
        for (int64_t c = c0; c < c1; c += 32) {
          __m128i first, second;
          unpack_nibbles(_mm_loadu_si128((const __m128i*)(row + c / 2)), first, second);
          _mm512_storeu_ps(o + c, _mm512_mul_ps(widen(first, zv), sv));
          _mm512_storeu_ps(o + c + 16, _mm512_mul_ps(widen(second, zv), sv));
        }
      }
    }
  }
}

}  // namespace ingot::cpu::detail
