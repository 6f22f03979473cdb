// The ymm row kernels of quantized_matmul with int8 activations (QuantActivations::Int8),
// written once for two instruction sets and compiled by two files:
//  - quantized_gemv_int8act_avx2.cpp (AVX2 without VNNI, e.g. AMD Zen 1-3): the integer
//    dot products are vpmaddubsw (unsigned byte x signed byte, pairs summed to int16) +
//    vpmaddwd with ones (pairs of int16 summed to int32);
//  - quantized_gemv_int8act_avxvnni.cpp (AVX-VNNI, e.g. Intel Alder Lake, AMD Zen 5):
//    one vpdpbusd (VEX, ymm) per 32 bytes, 4 u8 x s8 products added to an int32 lane.
// Both read the activations in the lane layout of the VNNI kernels
// (quantized_gemv_internal.h: int32 lane L sums 4 (bits 8) or 8 (bits 4) products) and sum
// the same integers exactly, so for the same input they give the same bits:
//  - bits 8, maddubs: the weight byte w (zero point 128) becomes the signed w - 128 (xor
//    0x80); vpmaddubsw needs one unsigned operand, so it multiplies |w - 128| (0..128) with
//    x carrying w's sign (vpsignb). A pair sums to at most 2 * 128 * 127 < 2^15: no
//    saturation. vpdpbusd: the bytes as they are, each lane started from its zero-point
//    correction (lane_init = -128 * sum of its activations).
//  - bits 4: the nibbles (0..15) are the unsigned operand as they are; low nibbles meet
//    the chunk's even activations, high nibbles its odd ones (maddubs: two vpmaddubsw
//    added in int16, at most 4 * 15 * 127 < 2^15). Each lane starts from its zero-point
//    correction (-z * sum of its activations), so it holds the exact sum of (w - z) * q_x.
// Per 8 lanes the int32 sums are converted to f32 and scaled by the activation block's
// scale (times, for 4-bit, the weight group's).
//
// The including file defines, before the include:
//   INGOT_INT8ACT_YMM_TARGET  the target attribute string ("avx2,fma,f16c"[",avxvnni"])
//   INGOT_INT8ACT_YMM_VNNI    1: vpdpbusd, 0: vpmaddubsw + vpmaddwd
// and gets int8act_rows_ymm (in an unnamed namespace: one copy per including file).
// Only reached after the run-time CPU check.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ingot/ops/cpu/avx2_math.h"
#include "ingot/ops/cpu/quantized_gemv_internal.h"

#if !defined(INGOT_INT8ACT_YMM_TARGET) || !defined(INGOT_INT8ACT_YMM_VNNI)
#error "define INGOT_INT8ACT_YMM_TARGET and INGOT_INT8ACT_YMM_VNNI before including this file"
#endif

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// A kernel's per-step helper: always inlined into its loop. Left to the compiler, GCC
// calls such helpers out of line from the row loops, each call preceded by a vzeroupper
// and the accumulators passed through memory (perf on int4 decode: ~15% of the GEMV
// time in the call sequence). A lambda does not take its enclosing function's target:
// one calling such helpers needs INGOT_YMM_STEP_LAMBDA after its parameter list.
#define INGOT_YMM_STEP __attribute__((target(INGOT_INT8ACT_YMM_TARGET), always_inline)) inline
#define INGOT_YMM_STEP_LAMBDA __attribute__((target(INGOT_INT8ACT_YMM_TARGET), always_inline))
#define INGOT_YMM_KERNEL __attribute__((target(INGOT_INT8ACT_YMM_TARGET)))

namespace ingot::cpu::detail {

namespace {

constexpr bool kVnni = INGOT_INT8ACT_YMM_VNNI;

// Bytes ahead of the decode kernels' weight reads to prefetch (measured: +5-10% decode
// tok/s on Zen 3 for int8 and int4 at 1024 over none).
constexpr int64_t kPrefetchAhead = 1024;

INGOT_YMM_STEP __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// 32 bytes at p, of which the first `valid` are read; the rest are `fill`.
INGOT_YMM_STEP __m256i load_partial(const uint8_t* p, int64_t valid, uint8_t fill) {
  alignas(32) uint8_t buf[32];
  std::memset(buf, fill, sizeof buf);
  std::memcpy(buf, p, size_t(valid));
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
}

// acc + the int32 lane sums of u (unsigned bytes) x s (signed bytes), 4 products a lane.
// maddubs: for bits 4 only, where a pair of products fits int16 (nibbles x int8).
INGOT_YMM_STEP __m256i dot_u8s8(__m256i acc, __m256i u, __m256i s) {
#if INGOT_INT8ACT_YMM_VNNI
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

// Kernels over M activation rows i0 .. i0 + M against one weight row r: the weight bytes
// are loaded and prepared once per step and used for every x row; out[m] = y[i0 + m, r].
// M = 1 (decode) keeps U steps in flight, each into its own accumulator (the FMA chain's
// latency, not the loads, would otherwise bound a single row); M = 4 (prefill) has four
// independent chains already.

// One 32-block t (8 lanes) of 8-bit weights wv: acc[m] += the block's lane sums for x row
// i0 + m times its activation scales (kGroups: times the block's weight group scale ws too).
// The padding of a short block: weight bytes 128, activations 0.
template <int M, bool kGroups = false>
INGOT_YMM_STEP void block_int8(const Int8Activations& a, int64_t i0, int64_t t, __m256i wv,
                               __m256* acc, float ws = 1.0f) {
  __m256i sw, aw;
  if constexpr (!kVnni) {
    sw = _mm256_xor_si256(wv, _mm256_set1_epi8(char(0x80)));  // w - 128, signed
    aw = _mm256_abs_epi8(sw);
  }
  for (int m = 0; m < M; ++m) {
    const __m256i xv = load32(a.packed.data() + (i0 + m) * a.kp + 32 * t);
    __m256 sv = _mm256_loadu_ps(a.lane_scales.data() + (i0 + m) * a.lanes + 8 * t);
    if constexpr (kGroups) sv = _mm256_mul_ps(sv, _mm256_set1_ps(ws));
    __m256i dot;
    if constexpr (kVnni)
      dot = dot_u8s8(load32(a.lane_init.data() + (i0 + m) * a.lanes + 8 * t), wv, xv);
    else
      dot = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(xv, sw)),
                              _mm256_set1_epi16(1));
    acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), sv, acc[m]);
  }
}

// 8-bit weights, fixed zero 128: one scale per row (applied at the end), or with kGroups
// one per group of w.group weights (a multiple of 32, so each 32-block lies in one group;
// applied per block).
template <int M, int U, bool kGroups = false>
INGOT_YMM_KERNEL void row_int8(const Int8Activations& a, int64_t i0, const PackedWeight& w,
                               int64_t r, float* out) {
  const uint8_t* row = w.q + r * w.k;
  const float* sc = w.scales + r * w.groups();
  const int64_t per_group = w.group / 32;  // 32-blocks per group (kGroups)
  const auto ws = [&](int64_t t) { return kGroups ? sc[t / per_group] : 1.0f; };
  __m256 acc[U][M];
  for (int u = 0; u < U; ++u)
    for (int m = 0; m < M; ++m) acc[u][m] = _mm256_setzero_ps();
  const int64_t full = w.k / 32, tail = w.k % 32;
  int64_t t = 0;
  for (; t + U <= full; t += U) {
    if (M == 1) {
      _mm_prefetch(reinterpret_cast<const char*>(row + 32 * t + kPrefetchAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(row + 32 * t + 64 + kPrefetchAhead), _MM_HINT_T0);
    }
    for (int u = 0; u < U; ++u)
      block_int8<M, kGroups>(a, i0, t + u, load32(row + 32 * (t + u)), acc[u], ws(t + u));
  }
  for (; t < full; ++t) block_int8<M, kGroups>(a, i0, t, load32(row + 32 * t), acc[0], ws(t));
  // x is zero-padded; the weights' padding is 128 (zero after the flip). (Per channel only:
  // with groups k is a multiple of 32.)
  if (tail) block_int8<M>(a, i0, full, load_partial(row + 32 * full, tail, 0x80), acc[0]);
  for (int m = 0; m < M; ++m) {
    for (int u = 1; u < U; ++u) acc[0][m] = _mm256_add_ps(acc[0][m], acc[u][m]);
    out[m] = kGroups ? hsum256(acc[0][m]) : w.scales[r] * hsum256(acc[0][m]);
  }
}

// [p[0], p[1], 0, 0] (kTwo) or [p[0], 0, 0, 0].
template <bool kTwo>
INGOT_YMM_STEP __m128 scale_pair(const float* p) {
  return kTwo ? _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(p))) : _mm_load_ss(p);
}

// 4-bit weights, taken in steps of 64 weights (32 bytes): step c (weights c .. c + 63) is
// half h = (c / 64) % 2 of chunk t = c / 128 of the lane layout, so its low nibbles meet
// packed x [128t + 32h, + 32) (the even weights), its high nibbles packed x
// [128t + 64 + 32h, + 32) (the odd ones), and lane l of the step (lane c / 8 + l of the
// layout) covers weights c + 8l .. c + 8l + 7. A lane lies inside one group (G a multiple
// of 32): with kG32 a full step spans groups g (lanes 0-3) and g + 1 (lanes 4-7), else
// only group g. kShort: the row's last 32 weights (k % 64 == 32), lanes 4-7 padding (zero
// activations and scales; the weight bytes are not read past the row). acc[m] += the
// step's lane sums for x row i0 + m times the activation and weight scales.
template <int M, bool kG32, bool kZeros, bool kShort>
INGOT_YMM_STEP void step_int4(const Int8Activations& a, int64_t i0, const PackedWeight& w,
                              int64_t r, int64_t c, int64_t g, __m256* acc) {
  const int64_t x_at = 128 * (c / 128) + 32 * ((c / 64) % 2), lane = c / 8;
  const __m256i low = _mm256_set1_epi8(0x0F);
  const uint8_t* bytes = w.q + r * (w.k / 2) + c / 2;
  if (M == 1) _mm_prefetch(reinterpret_cast<const char*>(bytes + kPrefetchAhead), _MM_HINT_T0);
  const __m256i b = kShort ? load_partial(bytes, 16, 0) : load32(bytes);
  const __m256i lo = _mm256_and_si256(b, low);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
  const float* sc = w.scales + r * w.groups();
  constexpr bool kTwo = kG32 && !kShort;  // lanes 4-7 belong to group g + 1
  // G 32: the groups are the activation blocks, so each lane's scale s_w * s_x is one of
  // two products [s_w[g] s_x[g], s_w[g+1] s_x[g+1]] spread over lanes 0-3 and 4-7 (a short
  // step: the second product is 0). Otherwise s_w[g] times the lanes' activation scales.
  // Several x rows (prefill, G 32): the pair spread over the lanes once per step, then
  // one multiply with each x row's lane scales: the same products, without a cross-lane
  // permute per x row (prefill GEMV 6-14% faster, one thread; decode keeps its order,
  // a broadcast + blend instead was 15% slower there).
  constexpr bool kLanesOnce = kG32 && M > 1;
  const __m256i pair = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
  __m128 ws_pair;
  __m256 ws;
  if constexpr (kG32)
    ws_pair = scale_pair<kTwo>(sc + g);
  else
    ws = _mm256_set1_ps(sc[g]);
  if constexpr (kLanesOnce) ws = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(ws_pair), pair);
  __m256i z;  // the zero point of each lane
  if constexpr (kZeros) {
    const uint8_t* zp = w.zeros + r * w.groups();
    z = kTwo ? _mm256_set_m128i(_mm_set1_epi32(zp[g + 1]), _mm_set1_epi32(zp[g]))
             : _mm256_set1_epi32(zp[g]);
  }
  for (int m = 0; m < M; ++m) {
    const int8_t* xh = a.packed.data() + (i0 + m) * a.kp + x_at;
    const int64_t l = (i0 + m) * a.lanes + lane;
    // Each lane starts from -z * (its activation sum).
    const __m256i start =
        kZeros ? _mm256_sub_epi32(_mm256_setzero_si256(),
                                  _mm256_mullo_epi32(z, load32(a.lane_sums.data() + l)))
               : load32(a.lane_init.data() + l);
    __m256i dot;
    if constexpr (kVnni) {
      dot = dot_u8s8(dot_u8s8(start, lo, load32(xh)), hi, load32(xh + 64));
    } else {
      const __m256i p16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo, load32(xh)),
                                           _mm256_maddubs_epi16(hi, load32(xh + 64)));
      dot = _mm256_add_epi32(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)), start);
    }
    __m256 scale;
    if constexpr (kG32 && !kLanesOnce)
      scale = _mm256_permutevar8x32_ps(
          _mm256_castps128_ps256(_mm_mul_ps(
              ws_pair, scale_pair<kTwo>(a.block_scales.data() + (i0 + m) * a.blocks + g))),
          pair);
    else
      scale = _mm256_mul_ps(ws, _mm256_loadu_ps(a.lane_scales.data() + l));
    acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[m]);
  }
}

// 4-bit weights. The group of each step is counted rather than divided: g = 64 st / G
// advances by 2 per step for G 32, by 1 every G / 64 steps otherwise.
template <int M, int U, bool kG32, bool kZeros>
INGOT_YMM_KERNEL void row_int4(const Int8Activations& a, int64_t i0, const PackedWeight& w,
                               int64_t r, float* out) {
  __m256 acc[U][M];
  for (int u = 0; u < U; ++u)
    for (int m = 0; m < M; ++m) acc[u][m] = _mm256_setzero_ps();
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
      step_int4<M, kG32, kZeros, false>(a, i0, w, r, 64 * (st + u), g, acc[u]);
      advance();
    }
  for (; st < full; ++st) {
    step_int4<M, kG32, kZeros, false>(a, i0, w, r, 64 * st, g, acc[0]);
    advance();
  }
  if (w.k % 64) step_int4<M, kG32, kZeros, true>(a, i0, w, r, 64 * full, g, acc[0]);
  for (int m = 0; m < M; ++m) {
    for (int u = 1; u < U; ++u) acc[0][m] = _mm256_add_ps(acc[0][m], acc[u][m]);
    out[m] = hsum256(acc[0][m]);
  }
}

// Decode with 4-bit G 32 weights without zero points: four W rows (rows_apart bytes
// apart) against one x row, one 64-weight step (the layout of step_int4; kShort: the
// last 32 weights, lanes 4-7 padding). The x bytes are loaded once for the four rows, and
// the four rows' sums are reduced across lanes together into one vector of the int32 dots
// of rows 0-3 with group g (lanes 0-3) and group g + 1 (lanes 4-7), so a step converts,
// scales and accumulates once for four rows instead of once per row (BM_QuantizedGemv
// int4 m=1). maddubs: the int16 sums through three vphaddw and one vpmaddwd (no
// saturation: a p16 element sums four products, at most 4 * 15 * 127 = 7620, the two
// vphaddw levels four of those); vpdpbusd: the int32 lanes through three vphaddd.
// block_init adds each group's zero-point correction (-8 * sum of its q_x); sc points at
// row 0's scale of group g, the rows' scales ng apart. acc lane j (j % 4 = row) += the
// group's dot * s_w * s_x.
template <bool kShort>
INGOT_YMM_STEP void step_int4_rows4(const int8_t* xh, const float* lane_scales,
                                    const int32_t* block_init, const uint8_t* bytes,
                                    int64_t rows_apart, const float* sc, int64_t ng, __m256& acc) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  const __m256i x_lo = load32(xh), x_hi = load32(xh + 64);
  __m256i part[4];
  for (int j = 0; j < 4; ++j) {
    const uint8_t* row = bytes + j * rows_apart;
    const __m256i b = kShort ? load_partial(row, 16, 0) : load32(row);
    const __m256i lo = _mm256_and_si256(b, low);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
    if constexpr (kVnni)
      part[j] = dot_u8s8(dot_u8s8(_mm256_setzero_si256(), lo, x_lo), hi, x_hi);
    else
      part[j] = _mm256_add_epi16(_mm256_maddubs_epi16(lo, x_lo), _mm256_maddubs_epi16(hi, x_hi));
  }
  __m256i lanes;
  if constexpr (kVnni)
    lanes =
        _mm256_hadd_epi32(_mm256_hadd_epi32(part[0], part[1]), _mm256_hadd_epi32(part[2], part[3]));
  else
    lanes = _mm256_madd_epi16(
        _mm256_hadd_epi16(_mm256_hadd_epi16(part[0], part[1]), _mm256_hadd_epi16(part[2], part[3])),
        _mm256_set1_epi16(1));
  const __m256i dot = _mm256_add_epi32(lanes, load32(block_init));
  // [s_w of rows 0-3 at g | at g + 1] (a short step: the upper half 0).
  const __m128 s0 = scale_pair<!kShort>(sc), s1 = scale_pair<!kShort>(sc + ng);
  const __m128 s2 = scale_pair<!kShort>(sc + 2 * ng), s3 = scale_pair<!kShort>(sc + 3 * ng);
  const __m128 s01 = _mm_unpacklo_ps(s0, s1), s23 = _mm_unpacklo_ps(s2, s3);
  const __m256 ws = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_movelh_ps(s01, s23)),
                                         _mm_movehl_ps(s23, s01), 1);
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(ws, _mm256_loadu_ps(lane_scales)),
                        acc);
}

// out[j] = y[i, r + j * stride] for j < 4 (4-bit G 32 weights without zero points, one x
// row). stride 1: four contiguous rows, the next four prefetched in order as these are read
// (the same 128 bytes per step). stride 0: row r alone, in all four lanes; a lane's sum
// depends on its own row only, always in the same order, so a row's output is the same
// bits whichever way it is reached (the siblings of a fused linear split rows elsewhere).
INGOT_YMM_KERNEL void rows4_int4_g32(const Int8Activations& a, int64_t i, const PackedWeight& w,
                                     int64_t r, int64_t stride, float* out) {
  const int64_t row_bytes = w.row_bytes(), ng = w.groups();
  const uint8_t* q = w.q + r * row_bytes;
  const uint8_t* next = q + 4 * stride * row_bytes;
  const float* sc = w.scales + r * ng;
  const int8_t* x = a.packed.data() + i * a.kp;
  const float* xs = a.lane_scales.data() + i * a.lanes;
  const int32_t* init = a.block_init.data() + i * a.lanes;
  __m256 acc = _mm256_setzero_ps();
  // Step st covers weights 64 st .. 64 st + 63: x at packed offset 128 (st / 2) + 32 (st % 2),
  // lanes 8 st .., bytes 32 st .. of each row, groups 2 st and 2 st + 1.
  const auto step = [&]<bool kShort>(int64_t st) INGOT_YMM_STEP_LAMBDA {
    step_int4_rows4<kShort>(x + 128 * (st / 2) + 32 * (st % 2), xs + 8 * st, init + 8 * st,
                            q + 32 * st, stride * row_bytes, sc + 2 * st, stride * ng, acc);
  };
  const int64_t full = w.k / 64;
  for (int64_t st = 0; st < full; ++st) {
    _mm_prefetch(reinterpret_cast<const char*>(next + 128 * st), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(next + 128 * st + 64), _MM_HINT_T0);
    step.template operator()<false>(st);
  }
  if (w.k % 64) step.template operator()<true>(full);
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1)));
}

template <int M, int U>
INGOT_YMM_KERNEL void row(const Int8Activations& a, int64_t i0, const PackedWeight& w, int64_t r,
                          float* out) {
  const bool g32 = w.group == 32;
  if (w.bits == 8 && w.group == w.k)
    row_int8<M, U>(a, i0, w, r, out);
  else if (w.bits == 8)
    row_int8<M, U, true>(a, i0, w, r, out);
  else if (w.zeros)
    g32 ? row_int4<M, U, true, true>(a, i0, w, r, out)
        : row_int4<M, U, false, true>(a, i0, w, r, out);
  else
    g32 ? row_int4<M, U, true, false>(a, i0, w, r, out)
        : row_int4<M, U, false, false>(a, i0, w, r, out);
}

// W rows in blocks of kRowBlock, against the x rows four at a time (one at a time, with
// four steps in flight, for decode). The block's weight bytes stay in L1 / L2 while the x
// rows pass, and four x rows (their quantised values and scales) stay in L1 across the
// block; for one x row each thread reads one sequential stream of weights (on Zen 3
// faster than interleaving rows; BM_QuantizedGemv).
INGOT_YMM_KERNEL void int8act_rows_ymm(const Int8Activations& a, const PackedWeight& w, int64_t r0,
                                       int64_t r1, float* y, int64_t ldy) {
  constexpr int64_t kRowBlock = 16;
  float out[4];
  for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
    const int64_t re = std::min(r1, rb + kRowBlock);
    int64_t i = 0;
    for (; i + 4 <= a.m; i += 4)
      for (int64_t r = rb; r < re; ++r) {
        row<4, 1>(a, i, w, r, out);
        for (int m = 0; m < 4; ++m) y[(i + m) * ldy + r] = out[m];
      }
    const bool four_rows = w.bits == 4 && w.group == 32 && !w.zeros;
    for (; i < a.m; ++i) {
      int64_t r = rb;
      if (four_rows)
        for (; r + 4 <= re; r += 4) {
          rows4_int4_g32(a, i, w, r, 1, out);
          for (int j = 0; j < 4; ++j) y[i * ldy + r + j] = out[j];
        }
      for (; r < re; ++r) {  // leftover rows: with four_rows, the same kernel (stride 0)
        four_rows ? rows4_int4_g32(a, i, w, r, 0, out) : row<1, 4>(a, i, w, r, out);
        y[i * ldy + r] = out[0];
      }
    }
  }
}

}  // namespace

}  // namespace ingot::cpu::detail
