// AVX2 row kernels of quantized_matmul with int8 activations (QuantActivations::Int8).
// They read the activations in the lane layout the VNNI kernels use
// (quantized_gemv_internal.h: int32 lane L sums 4 (bits 8) or 8 (bits 4) products), built
// from vpmaddubsw (unsigned byte x signed byte, pairs summed to int16) and vpmaddwd with
// ones (pairs of int16 summed to int32):
//  - bits 8: the weight byte w (zero point 128) becomes the signed w - 128 (xor 0x80);
//    vpmaddubsw needs one unsigned operand, so it multiplies |w - 128| (0..128) with x
//    carrying w's sign (vpsignb). A pair sums to at most 2 * 128 * 127 < 2^15: no
//    saturation.
//  - bits 4: the nibbles (0..15) are the unsigned operand as they are; low nibbles meet
//    the chunk's even activations, high nibbles its odd ones (two vpmaddubsw added in
//    int16: at most 4 * 15 * 127 < 2^15). Each lane starts from its zero-point correction
//    (-z * sum of its activations), so it holds the exact sum of (w - z) * q_x.
// Per 8 lanes the int32 sums are converted to f32 and scaled by the activation block's
// scale (times, for 4-bit, the weight group's). Only reached after the run-time CPU check.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ingot/ops/cpu/quantized_gemv_internal.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ingot::cpu::detail {

namespace {

INGOT_TARGET_AVX2_QUANT inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

INGOT_TARGET_AVX2_QUANT inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// 32 bytes at p, of which the first `valid` are read; the rest are `fill`.
INGOT_TARGET_AVX2_QUANT inline __m256i load_partial(const uint8_t* p, int64_t valid, uint8_t fill) {
  alignas(32) uint8_t buf[32];
  std::memset(buf, fill, sizeof buf);
  std::memcpy(buf, p, size_t(valid));
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
}

// One 32-block t (8 lanes) of an 8-bit weight row (its bytes wv): acc += the block's lane
// sums times the activation scales.
INGOT_TARGET_AVX2_QUANT inline void block_int8(const int8_t* xq, const float* xs, int64_t t,
                                              __m256i wv, __m256& acc) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32 * t));
  const __m256 sv = _mm256_loadu_ps(xs + 8 * t);
  const __m256i sw = _mm256_xor_si256(wv, _mm256_set1_epi8(char(0x80)));  // w - 128, signed
  const __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(sw), _mm256_sign_epi8(xv, sw));
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones)), sv, acc);
}

// 8-bit weights, one scale per row, fixed zero 128: row r. U blocks in flight, each into
// its own accumulator (the FMA chain's latency, not the loads, would otherwise bound it).
template <int U>
INGOT_TARGET_AVX2_QUANT float row_int8(const Int8Activations& a, int64_t i, const PackedWeight& w,
                                       int64_t r) {
  const int8_t* xq = a.packed.data() + i * a.kp;
  const float* xs = a.lane_scales.data() + i * a.lanes;
  const uint8_t* row = w.q + r * w.k;
  __m256 acc[U];
  for (int u = 0; u < U; ++u) acc[u] = _mm256_setzero_ps();
  const int64_t full = w.k / 32, tail = w.k % 32;
  int64_t t = 0;
  for (; t + U <= full; t += U)
    for (int u = 0; u < U; ++u) block_int8(xq, xs, t + u, load32(row + 32 * (t + u)), acc[u]);
  for (; t < full; ++t) block_int8(xq, xs, t, load32(row + 32 * t), acc[0]);
  // x is zero-padded; the weights' padding is 128 (zero after the flip)
  if (tail) block_int8(xq, xs, full, load_partial(row + 32 * full, tail, 0x80), acc[0]);
  for (int u = 1; u < U; ++u) acc[0] = _mm256_add_ps(acc[0], acc[u]);
  return w.scales[r] * hsum(acc[0]);
}

// 4-bit weights, taken in steps of 64 weights (32 bytes): step c (weights c .. c + 63) is
// half h = (c / 64) % 2 of chunk t = c / 128 of the lane layout, so its low nibbles meet
// packed x [128t + 32h, + 32) (the even weights), its high nibbles packed x
// [128t + 64 + 32h, + 32) (the odd ones), and lane l of the step (lane 16t + 8h + l of the
// layout) covers weights c + 8l .. c + 8l + 7. A lane lies inside one group (G a multiple
// of 32): with kG32 a full step spans groups g (lanes 0-3) and g + 1 (lanes 4-7), else
// only group g. kShort: the row's last 32 weights (k % 64 == 32), lanes 4-7 padding (zero
// activations and scales; the weight bytes are not read past the row). acc += the step's
// lane sums times the activation and weight scales.
template <bool kG32, bool kZeros, bool kShort>
INGOT_TARGET_AVX2_QUANT inline void step_int4(const Int8Activations& a, int64_t i,
                                             const PackedWeight& w, int64_t r, int64_t c,
                                             int64_t g, __m256& acc) {
  const int64_t t = c / 128, h = (c / 64) % 2, lane = i * a.lanes + 16 * t + 8 * h;
  const int8_t* xh = a.packed.data() + i * a.kp + 128 * t + 32 * h;
  const __m256i low = _mm256_set1_epi8(0x0F);
  const uint8_t* bytes = w.q + r * (w.k / 2) + c / 2;
  const __m256i b = kShort ? load_partial(bytes, 16, 0) : load32(bytes);
  const __m256i lo = _mm256_and_si256(b, low);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
  const __m256i p16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo, load32(xh)),
                                       _mm256_maddubs_epi16(hi, load32(xh + 64)));
  const float* sc = w.scales + r * w.groups();
  constexpr bool kTwo = kG32 && !kShort;  // lanes 4-7 belong to group g + 1
  __m256 s;                               // the weight scale of each lane
  if constexpr (kTwo)
    s = _mm256_set_m128(_mm_set1_ps(sc[g + 1]), _mm_set1_ps(sc[g]));
  else if constexpr (kShort)
    s = _mm256_set_m128(_mm_setzero_ps(), _mm_set1_ps(sc[g]));
  else
    s = _mm256_set1_ps(sc[g]);
  __m256i start;  // -z * (the lane's activation sum)
  if constexpr (kZeros) {
    const uint8_t* zp = w.zeros + r * w.groups();
    const __m256i z = kTwo ? _mm256_set_m128i(_mm_set1_epi32(zp[g + 1]), _mm_set1_epi32(zp[g]))
                           : _mm256_set1_epi32(zp[g]);
    start = _mm256_sub_epi32(_mm256_setzero_si256(),
                             _mm256_mullo_epi32(z, load32(a.lane_sums.data() + lane)));
  } else {
    start = load32(a.lane_init.data() + lane);
  }
  const __m256i dot = _mm256_add_epi32(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)), start);
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot),
                        _mm256_mul_ps(s, _mm256_loadu_ps(a.lane_scales.data() + lane)), acc);
}

// 4-bit weights: row r, U steps in flight (as for row_int8). The group of each step is
// counted rather than divided: g = 64 st / G advances by 2 per step for G 32, by 1 every
// G / 64 steps otherwise.
template <int U, bool kG32, bool kZeros>
INGOT_TARGET_AVX2_QUANT float row_int4(const Int8Activations& a, int64_t i, const PackedWeight& w,
                                       int64_t r) {
  __m256 acc[U];
  for (int u = 0; u < U; ++u) acc[u] = _mm256_setzero_ps();
  const int64_t steps_per_group = kG32 ? 1 : w.group / 64;
  int64_t g = 0, left = steps_per_group;
  const auto advance = [&]() {
    if (--left == 0) {
      g += kG32 ? 2 : 1;
      left = steps_per_group;
    }
  };
  const int64_t full = w.k / 64;
  int64_t st = 0;
  for (; st + U <= full; st += U)
    for (int u = 0; u < U; ++u) {
      step_int4<kG32, kZeros, false>(a, i, w, r, 64 * (st + u), g, acc[u]);
      advance();
    }
  for (; st < full; ++st) {
    step_int4<kG32, kZeros, false>(a, i, w, r, 64 * st, g, acc[0]);
    advance();
  }
  if (w.k % 64) step_int4<kG32, kZeros, true>(a, i, w, r, 64 * full, g, acc[0]);
  for (int u = 1; u < U; ++u) acc[0] = _mm256_add_ps(acc[0], acc[u]);
  return hsum(acc[0]);
}

}  // namespace

// One row at a time with four blocks in flight: each thread reads one sequential stream
// (on Zen 3 faster than interleaving rows; measured with BM_QuantizedGemv).
INGOT_TARGET_AVX2_QUANT void int8act_rows_avx2(const Int8Activations& a, int64_t i,
                                               const PackedWeight& w, int64_t r0, int64_t r1,
                                               float* y) {
  constexpr int U = 4;
  const bool g32 = w.group == 32;
  for (int64_t r = r0; r < r1; ++r) {
    if (w.bits == 8)
      y[r] = row_int8<U>(a, i, w, r);
    else if (w.zeros)
      y[r] = g32 ? row_int4<U, true, true>(a, i, w, r) : row_int4<U, false, true>(a, i, w, r);
    else
      y[r] = g32 ? row_int4<U, true, false>(a, i, w, r) : row_int4<U, false, false>(a, i, w, r);
  }
}

}  // namespace ingot::cpu::detail
