// AVX512-VNNI row kernels of quantized_matmul with int8 activations
// (QuantActivations::Int8; layouts in quantized_gemv_internal.h). vpdpbusd multiplies the
// weights' unsigned bytes (0..255, or nibbles 0..15) with the activations' signed bytes
// and adds groups of 4 products into 16 int32 lanes; each accumulation starts from the
// lane's zero-point correction (-z * sum of its activations), so a lane holds the exact
// sum of (w - z) * q_x. Per chunk, the lanes are converted to f32 and scaled by their
// activation block's scale (and, for 4-bit or grouped 8-bit weights, the weight group's). Four rows
// of W share each activation load: one row from each quarter of the range, so each thread reads
// four long sequential streams. Only reached after the run-time CPU check.
#include <immintrin.h>

#include <algorithm>

#include "ingot/ops/cpu/quantized_gemv_internal.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ingot::cpu::detail {

namespace {

// Bytes ahead of each stream's weight reads to prefetch (a stream's rows are contiguous,
// so this runs into its next rows). Without it, on AMD Zen 5 (EPYC, 2-core VM) the
// decode GEMV over a DRAM-resident weight (the [151936, 1024] LM head) streamed 12-13 GB/s
// for int8 and int4; with it 37-53 (int8) and 23-44 (int4), in interleaved runs on a
// loaded machine (docs/quantization.md, "Kernel tables"). 2-8 KiB were no better. The
// 4-bit kernel also prefetches each row's group scales (a stream of their own, a quarter
// of the packed bytes at G 32) as far ahead: on SmolLM2's short rows (k 576) their misses
// held the int4 GEMV to 18 GB/s; prefetched, 38 (int8: 43).
constexpr int64_t kPrefetchAhead = 1024;

// The weight scales of the 16 lanes of 64-weight chunk t of a row with groups of G (a
// multiple of 32; lane l covers weights 64t + 4l .. + 3): G 32: lanes 0-7 group 2t, 8-15
// group 2t + 1 (absent past the row's end: scale 0 against zero activations); G a multiple
// of 64: one group; otherwise lane by lane.
INGOT_TARGET_AVX512_VNNI __m512 chunk_group_scales(const float* sc, int64_t t,
                                                   const PackedWeight& w) {
  if (w.group == 32) {
    const __mmask16 two = 2 * t + 1 < w.groups() ? __mmask16(3) : __mmask16(1);
    const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    return _mm512_permutexvar_ps(idx, _mm512_maskz_loadu_ps(two, sc + 2 * t));
  }
  if (w.group % 64 == 0) return _mm512_set1_ps(sc[64 * t / w.group]);
  alignas(64) float lanes[16];
  for (int l = 0; l < 16; ++l) {
    const int64_t c = 64 * t + 4 * l;
    lanes[l] = c < w.k ? sc[c / w.group] : 0.0f;
  }
  return _mm512_load_ps(lanes);
}

// 8-bit weights, fixed zero 128: rows r[0 .. R). kGroups: one scale per group of
// w.group weights (a multiple of 32: a 32-block of x lies in one group), applied per lane
// with x's block scale; else one scale per row, applied once at the end.
template <int R, bool kGroups>
INGOT_TARGET_AVX512_VNNI void rows_int8(const Int8Activations& a, int64_t i, const PackedWeight& w,
                                        const int64_t* r, float* y) {
  const int8_t* xq = a.packed.data() + i * a.kp;
  const float* xs = a.lane_scales.data() + i * a.lanes;
  const int32_t* init = a.lane_init.data() + i * a.lanes;
  const uint8_t* row[R];
  __m512 acc[R];
  for (int j = 0; j < R; ++j) {
    row[j] = w.q + r[j] * w.k;
    acc[j] = _mm512_setzero_ps();
  }
  const int64_t full = w.k / 64, tail = w.k % 64;
  for (int64_t t = 0; t <= full; ++t) {
    if (t == full && tail == 0) break;
    const __mmask64 mask = t < full ? ~__mmask64(0) : (__mmask64(1) << tail) - 1;
    const __m512i xv = _mm512_loadu_si512(xq + 64 * t);
    const __m512i iv = _mm512_loadu_si512(init + 16 * t);
    const __m512 sv = _mm512_loadu_ps(xs + 16 * t);
    for (int j = 0; j < R; ++j) {
      _mm_prefetch(reinterpret_cast<const char*>(row[j] + 64 * t + kPrefetchAhead), _MM_HINT_T0);
      const __m512i wv = _mm512_maskz_loadu_epi8(mask, row[j] + 64 * t);
      const __m512i dp = _mm512_dpbusd_epi32(iv, wv, xv);
      if constexpr (kGroups) {
        const float* sc = w.scales + r[j] * w.groups();
        _mm_prefetch(reinterpret_cast<const char*>(sc + 2 * t + kPrefetchAhead / 32), _MM_HINT_T0);
        const __m512 s = _mm512_mul_ps(chunk_group_scales(sc, t, w), sv);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp), s, acc[j]);
      } else {
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp), sv, acc[j]);
      }
    }
  }
  for (int j = 0; j < R; ++j)
    y[r[j]] = (kGroups ? 1.0f : w.scales[r[j]]) * _mm512_reduce_add_ps(acc[j]);
}

// 4-bit weights: chunks of 128 weights (64 bytes): the low nibbles meet the chunk's even
// activations, the high nibbles its odd ones (the layout's order), so lane l covers
// weights c0 + 8l .. c0 + 8l + 7, inside one group of 32 or more. `idx` maps lanes to the
// chunk's groups (G 32: l / 4, G 64: l / 8); G a multiple of 128 has one group per chunk.
template <int R, bool kZeros>
INGOT_TARGET_AVX512_VNNI void rows_int4(const Int8Activations& a, int64_t i, const PackedWeight& w,
                                        const int64_t* r, float* y) {
  const int8_t* xq = a.packed.data() + i * a.kp;
  const float* xs = a.lane_scales.data() + i * a.lanes;
  const int32_t* sums = a.lane_sums.data() + i * a.lanes;
  const int32_t* init = a.lane_init.data() + i * a.lanes;
  const int64_t G = w.group, ng = w.groups(), rb = w.k / 2;
  const int per_chunk = G < 128 ? int(128 / G) : 1;  // groups in a full chunk
  const __m512i idx = G == 32   ? _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3)
                      : G == 64 ? _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)
                                : _mm512_setzero_si512();
  const __m512i low = _mm512_set1_epi8(0x0F);
  const uint8_t* row[R];
  const float* sc[R];
  const uint8_t* zp[R];
  __m512 acc[R];
  for (int j = 0; j < R; ++j) {
    row[j] = w.q + r[j] * rb;
    sc[j] = w.scales + r[j] * ng;
    zp[j] = kZeros ? w.zeros + r[j] * ng : nullptr;
    acc[j] = _mm512_setzero_ps();
  }
  for (int64_t c0 = 0; c0 < w.k; c0 += 128) {
    const int64_t t = c0 / 128, bytes = std::min<int64_t>(64, (w.k - c0) / 2);
    const __mmask64 mask = bytes == 64 ? ~__mmask64(0) : (__mmask64(1) << bytes) - 1;
    const int64_t g0 = c0 / G;
    const int ngc = G < 128 ? int(std::min<int64_t>(per_chunk, ng - g0)) : 1;
    const __mmask16 gmask = __mmask16((1u << ngc) - 1);
    const __m512i xa = _mm512_loadu_si512(xq + 128 * t);
    const __m512i xb = _mm512_loadu_si512(xq + 128 * t + 64);
    const __m512 xsv = _mm512_loadu_ps(xs + 16 * t);
    __m512i iv = _mm512_loadu_si512(init + 16 * t);
    __m512i sumv = kZeros ? _mm512_loadu_si512(sums + 16 * t) : _mm512_setzero_si512();
    for (int j = 0; j < R; ++j) {
      _mm_prefetch(reinterpret_cast<const char*>(row[j] + 64 * t + kPrefetchAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(sc[j] + g0 + kPrefetchAhead / 16), _MM_HINT_T0);
      const __m512i b = _mm512_maskz_loadu_epi8(mask, row[j] + 64 * t);
      const __m512i lo = _mm512_and_si512(b, low);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), low);
      __m512i start = iv;
      if constexpr (kZeros) {
        const __m512i z =
            G < 128 ? _mm512_permutexvar_epi32(
                          idx, _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(gmask, zp[j] + g0)))
                    : _mm512_set1_epi32(zp[j][g0]);
        start = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_mullo_epi32(z, sumv));
      }
      __m512i dp = _mm512_dpbusd_epi32(start, lo, xa);
      dp = _mm512_dpbusd_epi32(dp, hi, xb);
      const __m512 s = G < 128
                           ? _mm512_permutexvar_ps(idx, _mm512_maskz_loadu_ps(gmask, sc[j] + g0))
                           : _mm512_set1_ps(sc[j][g0]);
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp), _mm512_mul_ps(s, xsv), acc[j]);
    }
  }
  for (int j = 0; j < R; ++j) y[r[j]] = _mm512_reduce_add_ps(acc[j]);
}

template <int R>
INGOT_TARGET_AVX512_VNNI void rows(const Int8Activations& a, int64_t i, const PackedWeight& w,
                                   const int64_t* r, float* y) {
  if (w.bits == 8 && w.group == w.k)
    rows_int8<R, false>(a, i, w, r, y);
  else if (w.bits == 8)
    rows_int8<R, true>(a, i, w, r, y);
  else if (w.zeros)
    rows_int4<R, true>(a, i, w, r, y);
  else
    rows_int4<R, false>(a, i, w, r, y);
}

}  // namespace

INGOT_TARGET_AVX512_VNNI void int8act_rows_vnni(const Int8Activations& a, int64_t i,
                                                const PackedWeight& w, int64_t r0, int64_t r1,
                                                float* y) {
  // Four rows at a time, one from each quarter of [r0, r1): four long sequential streams,
  // the access pattern the hardware prefetchers keep up with (bench/machine_probe's
  // best read pattern), where four adjacent short rows are not.
  const int64_t seg = (r1 - r0) / 4;
  for (int64_t t = 0; t < seg; ++t) {
    const int64_t r[4] = {r0 + t, r0 + seg + t, r0 + 2 * seg + t, r0 + 3 * seg + t};
    rows<4>(a, i, w, r, y);
  }
  for (int64_t r = r0 + 4 * seg; r < r1; ++r) rows<1>(a, i, w, &r, y);
}

}  // namespace ingot::cpu::detail
