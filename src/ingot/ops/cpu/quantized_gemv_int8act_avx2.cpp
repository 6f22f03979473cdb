// AVX2 (no VNNI) kernels of quantized_matmul with int8 activations
// (QuantActivations::Int8): the activation quantiser, and the row kernels of
// quantized_gemv_int8act_ymm.h with vpmaddubsw + vpmaddwd dot products. Only reached after
// the run-time CPU check.
#define INGOT_INT8ACT_YMM_TARGET "avx2,fma,f16c"
#define INGOT_INT8ACT_YMM_VNNI 0
#include "ingot/ops/cpu/quantized_gemv_int8act_ymm.h"

namespace ingot::cpu::detail {

// quantize_row_scalar's values bit for bit: the block's max|x| is exact in any order
// (NaN lanes are skipped, as std::max skips them), x * (1 / d) is the same product, and
// _mm256_round_ps to nearest even is nearbyint in the default rounding mode.
INGOT_TARGET_AVX2_QUANT void quantize_row_avx2(const float* x, int64_t k, int8_t* q,
                                               float* scales) {
  constexpr int64_t kBlock = 32;
  const __m256 abs_bits = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  // packs_epi32 then packs_epi16 leave the 32 bytes as dwords of four in the order
  // v0[0:4] v1[0:4] v2[0:4] v3[0:4] | v0[4:8] v1[4:8] v2[4:8] v3[4:8]; this restores k order.
  const __m256i dword_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t b = 0, c0 = 0;
  for (; c0 + kBlock <= k; ++b, c0 += kBlock) {
    __m256 v[4];
    __m256 vmax = _mm256_setzero_ps();
    for (int u = 0; u < 4; ++u) {
      v[u] = _mm256_loadu_ps(x + c0 + 8 * u);
      vmax = _mm256_max_ps(_mm256_and_ps(v[u], abs_bits), vmax);  // NaN: keeps vmax
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
    const float d = _mm_cvtss_f32(m4) / 127.0f;
    const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    __m256i n[4];
    for (int u = 0; u < 4; ++u) {
      const __m256 r =
          _mm256_round_ps(_mm256_mul_ps(v[u], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      n[u] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, lo), hi));
    }
    const __m256i bytes =
        _mm256_packs_epi16(_mm256_packs_epi32(n[0], n[1]), _mm256_packs_epi32(n[2], n[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + c0),
                        _mm256_permutevar8x32_epi32(bytes, dword_order));
    scales[b] = d;
  }
  if (c0 < k) quantize_row_scalar(x + c0, k - c0, q + c0, scales + b);  // a short last block
}

INGOT_TARGET_AVX2_QUANT void int8act_rows_avx2(const Int8Activations& a, const PackedWeight& w,
                                               int64_t r0, int64_t r1, float* y, int64_t ldy) {
  int8act_rows_ymm(a, w, r0, r1, y, ldy);
}

}  // namespace ingot::cpu::detail
