// Prefill GEMM of quantized_matmul with int8 activations (QuantActivations::Int8, m large
// enough; quantized_gemv.cpp picks it). AVX512-VNNI with the 16 int32 lanes of a zmm as 16
// x rows (the panel layout, quantized_gemv_internal.h): per step of 4 weights, one dword
// of a W row is broadcast to all lanes and vpdpbusd multiplies it with 4 activations of
// each of the panel's 16 rows. W is read in its stored row-major order (int8 bytes as
// they are; int4 nibbles unpacked to bytes per block of rows into a per-thread buffer,
// kBlockRows * k bytes: no repacked copy of the weights is kept), x is rearranged once per
// call (it is small). A register tile is NR W rows x MP panels (NR * MP int32 lanes for
// the current 32-block, as many f32 accumulators): each weight dword loaded feeds MP
// vpdpbusd, each activation vector NR.
//
// Per 32-block, every lane starts from its zero-point term (-z * sum q_x, exact in
// int32), accumulates the block's 32 products exactly, is converted to f32 and scaled by
// the activation block's scale (times the weight group's scale for int4; int8's per-row
// scale is applied once at the end): the integer sums of int8act_rows_scalar, in another
// f32 summation order. Only reached after the run-time CPU check.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/quantized_gemv_internal.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ingot::cpu::detail {

namespace {

constexpr int64_t kBlock = 32;      // activation elements per scale (quantize_activations)
constexpr int kLanes = 16;          // x rows per panel
constexpr int64_t kBlockRows = 32;  // W rows unpacked per buffer fill (a multiple of NR)
// 32-blocks of k per pass over the panels (1024 weights): a row block's bytes for one pass
// (32 rows x 1 KB) and an x panel's (16 KB) stay near the core while all tiles use them;
// partial sums go to a per-thread buffer, not y (whose rows are 4 KB+ apart).
constexpr int64_t kChunkBlocks = 32;

// How the weight's scale and zero point enter: int8 per row with the fixed zero 128; int8
// per group (a multiple of 32) with the fixed zero 128 (scaled per block, as int4); int4
// per group with the fixed zero 8; int4 per group with zero points.
enum class Mode { Int8, Int8Groups, Int4, Int4Zeros };

// One 32-block of one x row: 32 quantised values (zeros past k) into `q`, returns the
// scale. Bit for bit quantize_row_scalar's values: d = max|x| / 127, q = round-to-nearest-even
// (x * (1 / d)) clamped to [-127, 127] (cvtps_epi32 under the default rounding mode is
// nearbyint's rounding). even_odd: stored as [the 16 even elements, the 16 odd ones].
INGOT_TARGET_AVX512_VNNI float quantize_block(const float* x, int64_t n, bool even_odd, int8_t* q,
                                              int32_t& sum) {
  const __mmask16 m0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 m1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : 0;
  const __m512 v0 = _mm512_maskz_loadu_ps(m0, x), v1 = _mm512_maskz_loadu_ps(m1, x + 16);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
  const float d = amax / 127.0f;
  const __m512 id = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  __m512i q0 =
      _mm512_min_epi32(hi, _mm512_max_epi32(lo, _mm512_cvtps_epi32(_mm512_mul_ps(v0, id))));
  __m512i q1 =
      _mm512_min_epi32(hi, _mm512_max_epi32(lo, _mm512_cvtps_epi32(_mm512_mul_ps(v1, id))));
  sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
  if (even_odd) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i e = _mm512_permutex2var_epi32(q0, even, q1);
    q1 = _mm512_permutex2var_epi32(q0, odd, q1);
    q0 = e;
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(q0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(q1));
  return d;
}

// Panel P of the layout: rows 16P .. 16P + 15 of x (zero rows past m).
INGOT_TARGET_AVX512_VNNI void quantize_panel(const float* x, int64_t ldx, int64_t P,
                                             int32_t corr_factor, PanelActivations& a) {
  int8_t* q = a.q.data() + P * a.panel_bytes();
  float* scales = a.scales.data() + P * a.blocks * kLanes;
  int32_t* corr = a.corr.data() + P * a.blocks * kLanes;
  int8_t block[kBlock];
  for (int L = 0; L < kLanes; ++L) {
    const int64_t i = P * kLanes + L;
    for (int64_t b = 0; b < a.blocks; ++b) {
      float d = 0.0f;
      int32_t sum = 0;
      if (i < a.m)
        d = quantize_block(x + i * ldx + b * kBlock, std::min(kBlock, a.k - b * kBlock), a.even_odd,
                           block, sum);
      else
        std::memset(block, 0, sizeof(block));
      for (int j = 0; j < 8; ++j)  // step 8b + j, lane L
        std::memcpy(q + ((8 * b + j) * kLanes + L) * 4, block + 4 * j, 4);
      scales[b * kLanes + L] = d;
      corr[b * kLanes + L] = corr_factor * sum;
    }
  }
}

// An int4 row as one byte per weight, each 32-block in the even-odd order (weights
// 32b + 0, 2, .., 30, then 32b + 1, 3, .., 31: the low nibbles of the block's 16 bytes,
// then the high ones), so no byte interleave is needed. k % 32 == 0.
INGOT_TARGET_AVX512_VNNI void unpack_int4_row(const uint8_t* src, int64_t k, uint8_t* dst) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  // 128-bit lane q of lo / hi = block q's even / odd weights; out = [lo q, hi q] per block.
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  const __m512i second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  for (int64_t c = 0; c < k; c += 128) {
    const int64_t n = std::min<int64_t>(128, k - c);  // 32, 64, 96 or 128 weights
    const __mmask64 lm = n == 128 ? ~__mmask64(0) : (__mmask64(1) << (n / 2)) - 1;
    const __m512i b = _mm512_maskz_loadu_epi8(lm, src + c / 2);
    const __m512i lo = _mm512_and_si512(b, low);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), low);
    const __m512i out0 = _mm512_permutex2var_epi64(lo, first, hi);
    const __m512i out1 = _mm512_permutex2var_epi64(lo, second, hi);
    if (n == 128) {
      _mm512_storeu_si512(dst + c, out0);
      _mm512_storeu_si512(dst + c + 64, out1);
    } else {
      const __mmask64 m0 = n >= 64 ? ~__mmask64(0) : (__mmask64(1) << n) - 1;
      const __mmask64 m1 = n > 64 ? (__mmask64(1) << (n - 64)) - 1 : 0;
      _mm512_mask_storeu_epi8(dst + c, m0, out0);
      _mm512_mask_storeu_epi8(dst + c + 64, m1, out1);
    }
  }
}

// NR W rows (wr[j]: its bytes, 32 * blocks readable; rows[j]: its index) x MP panels from
// p0, over the 32-blocks [b0, b1), added to the partial sums acc_out[p * ldp + j * 16 + L]
// (set instead when b0 == 0). Rows j >= nr duplicate a valid row and are not stored.
template <int NR, int MP, Mode kMode>
INGOT_TARGET_AVX512_VNNI void tile(const PanelActivations& a, int64_t p0, int64_t b0, int64_t b1,
                                   const uint8_t* const* wr, const int64_t* rows, int nr,
                                   const PackedWeight& w, float* acc_out, int64_t ldp) {
  const int64_t ng = w.groups(), pb = a.panel_bytes(), ps = a.blocks * kLanes;
  // The weight group of block b, kept incrementally (int8: one group).
  const int64_t per_group = kMode == Mode::Int8 ? a.blocks : w.group / kBlock;
  int64_t g = b0 / per_group, in_group = b0 % per_group;
  const int8_t* xq = a.q.data() + p0 * pb;
  const float* xs = a.scales.data() + p0 * ps;
  const int32_t* xc = a.corr.data() + p0 * ps;
  const float* ws_row[NR];
  const uint8_t* zp_row[NR];
  // The small loops over NR / MP are unrolled so the accumulators stay in registers.
#pragma GCC unroll 16
  for (int n = 0; n < NR; ++n) {
    ws_row[n] = w.scales + rows[n] * ng;
    zp_row[n] = kMode == Mode::Int4Zeros ? w.zeros + rows[n] * ng : nullptr;
  }
  __m512 acc[NR][MP];
#pragma GCC unroll 16
  for (int n = 0; n < NR; ++n) {
#pragma GCC unroll 16
    for (int p = 0; p < MP; ++p)
      acc[n][p] = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(acc_out + p * ldp + n * kLanes);
  }
  for (int64_t b = b0; b < b1; ++b) {
    __m512i dp[NR][MP], corr[MP];
#pragma GCC unroll 16
    for (int p = 0; p < MP; ++p) corr[p] = _mm512_loadu_si512(xc + p * ps + b * kLanes);
#pragma GCC unroll 16
    for (int n = 0; n < NR; ++n) {
      if constexpr (kMode == Mode::Int4Zeros) {
        const __m512i z = _mm512_set1_epi32(zp_row[n][g]);
#pragma GCC unroll 16
        for (int p = 0; p < MP; ++p) dp[n][p] = _mm512_mullo_epi32(z, corr[p]);
      } else {
#pragma GCC unroll 16
        for (int p = 0; p < MP; ++p) dp[n][p] = corr[p];
      }
    }
    const int8_t* xb = xq + b * 8 * 64;
    const int64_t off = b * kBlock;
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      __m512i xv[MP];
#pragma GCC unroll 16
      for (int p = 0; p < MP; ++p) xv[p] = _mm512_loadu_si512(xb + p * pb + s * 64);
#pragma GCC unroll 16
      for (int n = 0; n < NR; ++n) {
        int32_t word;
        std::memcpy(&word, wr[n] + off + 4 * s, 4);
        const __m512i wv = _mm512_set1_epi32(word);
#pragma GCC unroll 16
        for (int p = 0; p < MP; ++p) dp[n][p] = _mm512_dpbusd_epi32(dp[n][p], wv, xv[p]);
      }
    }
    __m512 sx[MP];
#pragma GCC unroll 16
    for (int p = 0; p < MP; ++p) sx[p] = _mm512_loadu_ps(xs + p * ps + b * kLanes);
#pragma GCC unroll 16
    for (int n = 0; n < NR; ++n) {
      if constexpr (kMode == Mode::Int8) {
#pragma GCC unroll 16
        for (int p = 0; p < MP; ++p)
          acc[n][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp[n][p]), sx[p], acc[n][p]);
      } else {
        const __m512 ws = _mm512_set1_ps(ws_row[n][g]);
#pragma GCC unroll 16
        for (int p = 0; p < MP; ++p)
          acc[n][p] =
              _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp[n][p]), _mm512_mul_ps(sx[p], ws), acc[n][p]);
      }
    }
    if (++in_group == per_group) {
      in_group = 0;
      ++g;
    }
  }
#pragma GCC unroll 16
  for (int n = 0; n < NR; ++n) {
    if (n >= nr) break;
#pragma GCC unroll 16
    for (int p = 0; p < MP; ++p) _mm512_storeu_ps(acc_out + p * ldp + n * kLanes, acc[n][p]);
  }
}

// W rows [r0, r1) against every panel: per block of kBlockRows rows (unpacked or padded
// into `buf` when the stored rows cannot be read 32 * blocks bytes at a time), tiles of NR
// rows x MP panels (a last odd panel with MP = 1).
template <int NR, int MP, Mode kMode>
INGOT_TARGET_AVX512_VNNI void gemm_rows(const PanelActivations& a, const PackedWeight& w,
                                        int64_t r0, int64_t r1, float* y, int64_t ldy) {
  static_assert(kBlockRows % NR == 0);
  const int64_t kp = a.blocks * kBlock;
  const bool direct = w.bits == 8 && w.k == kp;
  std::vector<uint8_t> buf(direct ? 0 : size_t(kBlockRows * kp));
  // Partial sums of a row block: [panel][row in block][lane].
  const int64_t ldp = kBlockRows * kLanes;
  std::vector<float> partial(size_t(a.panels * ldp));
  for (int64_t rb = r0; rb < r1; rb += kBlockRows) {
    const int64_t re = std::min(r1, rb + kBlockRows);
    const uint8_t* base = w.q + rb * w.k;
    int64_t ld = w.k;
    if (!direct) {
      for (int64_t r = rb; r < re; ++r) {
        uint8_t* dst = buf.data() + (r - rb) * kp;
        if (w.bits == 4) {
          unpack_int4_row(w.q + r * (w.k / 2), w.k, dst);
        } else {
          std::memcpy(dst, w.q + r * w.k, size_t(w.k));
          std::memset(dst + w.k, 0, size_t(kp - w.k));
        }
      }
      base = buf.data();
      ld = kp;
    }
    for (int64_t b0 = 0; b0 < a.blocks; b0 += kChunkBlocks) {
      const int64_t b1 = std::min(a.blocks, b0 + kChunkBlocks);
      for (int64_t p0 = 0; p0 < a.panels; p0 += MP) {
        const int mp = int(std::min<int64_t>(MP, a.panels - p0));
        for (int64_t n0 = rb; n0 < re; n0 += NR) {
          const int nr = int(std::min<int64_t>(NR, re - n0));
          const uint8_t* wr[NR];
          int64_t rows[NR];
          for (int j = 0; j < NR; ++j) {
            const int64_t jj = std::min(j, nr - 1);
            wr[j] = base + (n0 - rb + jj) * ld;
            rows[j] = n0 + jj;
          }
          float* out = partial.data() + p0 * ldp + (n0 - rb) * kLanes;
          if (mp == MP)
            tile<NR, MP, kMode>(a, p0, b0, b1, wr, rows, nr, w, out, ldp);
          else
            tile<NR, 1, kMode>(a, p0, b0, b1, wr, rows, nr, w, out, ldp);
        }
      }
    }
    // partial[p][r - rb][L] -> y[16p + L, r] (int8: times the row's scale), x row by x row
    // so the row block's outputs of one x row are written together.
    for (int64_t i = 0; i < a.m; ++i) {
      const float* src = partial.data() + (i / kLanes) * ldp + i % kLanes;
      float* dst = y + i * ldy;
      for (int64_t r = rb; r < re; ++r)
        dst[r] = src[(r - rb) * kLanes] * (kMode == Mode::Int8 ? w.scales[r] : 1.0f);
    }
  }
}

// Tile shapes: one panel (m <= 16) takes 8 rows x 1 panel; more take 4 rows x 2 panels
// (both 16 int32 + 16 f32 accumulators).
template <Mode kMode>
void gemm_mode(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy) {
  parallel_for(0, w.n, kBlockRows, [&](int64_t r0, int64_t r1) {
    if (a.panels == 1)
      gemm_rows<8, 1, kMode>(a, w, r0, r1, y, ldy);
    else
      gemm_rows<4, 2, kMode>(a, w, r0, r1, y, ldy);
  });
}

}  // namespace

void quantize_activation_panels(const float* x, int64_t ldx, int64_t m, const PackedWeight& w,
                                PanelActivations& a) {
  const int32_t factor = a.resize(m, w, kLanes);
  parallel_for(0, a.panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) quantize_panel(x, ldx, p, factor, a);
  });
}

void int8act_gemm_vnni(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy) {
  if (w.bits == 8 && w.group == w.k)
    gemm_mode<Mode::Int8>(a, w, y, ldy);
  else if (w.bits == 8)
    gemm_mode<Mode::Int8Groups>(a, w, y, ldy);
  else if (w.zeros)
    gemm_mode<Mode::Int4Zeros>(a, w, y, ldy);
  else
    gemm_mode<Mode::Int4>(a, w, y, ldy);
}

}  // namespace ingot::cpu::detail
