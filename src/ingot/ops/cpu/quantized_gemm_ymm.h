// The prefill GEMM of quantized_matmul with int8 activations on ymm (the AVX2 and AVX-VNNI
// kernel tables), written once for two instruction sets and compiled by two files:
//  - quantized_gemm_avx2.cpp (AVX2 without VNNI, e.g. AMD Zen 1-3, Intel before Ice Lake):
//    the dot products from vpmaddubsw (unsigned byte x signed byte, pairs summed to int16)
//    and vpmaddwd with ones (pairs of int16 summed to int32);
//  - quantized_gemm_avxvnni.cpp (AVX-VNNI): VEX vpdpbusd, 4 u8 x s8 products per int32 lane.
// The ymm counterpart of quantized_gemm_vnni.cpp: the 8 int32 lanes of a ymm are 8 x rows
// (PanelActivations with lanes = 8); per step of 4 weights one dword of a W row is
// broadcast and multiplied with 4 activations of each of the panel's 8 rows. A register
// tile is NR W rows x MP panels: each weight dword loaded feeds MP dot products, each
// activation vector NR. W is read in its stored row-major order (int8 in place, int4
// nibbles unpacked per block of rows into a per-thread buffer), k in passes of
// kChunkBlocks 32-blocks whose partial sums stay in a per-thread buffer.
//
// The integer sum of each lane over a 32-block is exact, sum (w - z) * q_x, in both compiles:
//  - vpdpbusd: the lane starts from its zero-point term (PanelActivations::corr, times the
//    group's z for weights with zero points) and adds the products of the stored bytes.
//  - maddubs, bits 4: the nibbles (0..15) are the unsigned operand; the block's 8 steps are
//    summed in int16 (an int16 then holds 16 products, at most 16 * 15 * 127 = 30480 <
//    2^15), then vpmaddwd with ones into int32, plus the zero-point term.
//  - maddubs, bits 8: the weight byte (zero point 128) becomes the signed w - 128 (xor
//    0x80); vpmaddubsw multiplies |w - 128| (0..128) with x carrying w's sign (vpsignb), a
//    pair at most 2 * 128 * 127 < 2^15: the lane sums (w - 128) * q_x directly, so corr is
//    not used.
// Per 32-block each lane's int32 is converted to f32 and scaled (x's block scale; int4 and
// grouped int8: times the group's scale; per-channel int8's row scale at the end) in the same order
// in both compiles, so they give the same bits; against int8act_rows_scalar the integer sums are
// the same and only the f32 summation order differs.
//
// The including file defines, before the include:
//   INGOT_GEMM_YMM_TARGET  the target attribute string ("avx2,fma,f16c"[",avxvnni"])
//   INGOT_GEMM_YMM_VNNI    1: vpdpbusd, 0: vpmaddubsw + vpmaddwd
//   (optionally) INGOT_GEMM_YMM_DPBUSD  the vpdpbusd intrinsic (default: the VEX form)
// and gets gemm_ymm(a, w, y, ldy) (in an unnamed namespace: one copy per including file).
// Only reached after the run-time CPU check.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/quantized_gemv_internal.h"

#if !defined(INGOT_GEMM_YMM_TARGET) || !defined(INGOT_GEMM_YMM_VNNI)
#error "define INGOT_GEMM_YMM_TARGET and INGOT_GEMM_YMM_VNNI before including this file"
#endif

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// The vpdpbusd of the VNNI compile: the VEX form (AVX-VNNI). A test
// (tests/ops/quantized_gemm_ymm_evex_test.cpp) compiles the same kernel with the EVEX form
// (AVX512-VNNI + VL, the same operation on ymm) to run this path on CPUs without AVX-VNNI.
#ifndef INGOT_GEMM_YMM_DPBUSD
#define INGOT_GEMM_YMM_DPBUSD _mm256_dpbusd_avx_epi32
#endif

#define INGOT_GEMM_YMM_KERNEL __attribute__((target(INGOT_GEMM_YMM_TARGET)))

namespace ingot::cpu::detail {

namespace {

constexpr bool kVnni = INGOT_GEMM_YMM_VNNI;
constexpr int64_t kBlock = 32;  // activation elements per scale (quantize_activations)
constexpr int kLanes = 8;       // x rows per panel
// W rows unpacked per buffer fill: 32 rounded down to a multiple of the tile's NR.
template <int NR>
constexpr int64_t kBlockRows = (32 / NR) * NR;
// 32-blocks of k per pass (1024 weights): a row block's bytes for one pass (32 KB) and an x
// panel's (8 KB) stay near the core while all tiles use them.
constexpr int64_t kChunkBlocks = 32;

// How the weight's scale and zero point enter: int8 per row with the fixed zero 128; int8
// per group (a multiple of 32) with the fixed zero 128 (scaled per block, as int4); int4
// per group with the fixed zero 8; int4 per group with zero points.
enum class Mode { Int8, Int8Groups, Int4, Int4Zeros };

// An int4 row as one byte per weight, each 32-block as [its 16 low nibbles, its 16 high
// nibbles] (weights 32b + 0, 2, .., 30, then 32b + 1, 3, .., 31): the order of the panels'
// even_odd activations. k % 32 == 0.
INGOT_GEMM_YMM_KERNEL void unpack_int4_row(const uint8_t* src, int64_t k, uint8_t* dst) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  int64_t c = 0;
  for (; c + 64 <= k; c += 64) {  // two blocks: 128-bit lane h of lo / hi = block h's halves
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + c / 2));
    const __m256i lo = _mm256_and_si256(b, low);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c),
                        _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c + 32),
                        _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  if (c < k) {  // one last block
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + c / 2));
    const __m128i l = _mm256_castsi256_si128(low);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + c), _mm_and_si128(b, l));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + c + 16),
                     _mm_and_si128(_mm_srli_epi16(b, 4), l));
  }
}

// NR W rows (wr[j]: its bytes, 32 * blocks readable; rows[j]: its index) x MP panels from
// p0, over the 32-blocks [b0, b1), accumulated into the f32 partial sums
// acc_out[p * ldp + j * 8 + L] (zeroed first when b0 == 0). Rows j >= nr duplicate a valid
// row; their partial sums land in slots the caller does not read.
template <int NR, int MP, Mode kMode>
INGOT_GEMM_YMM_KERNEL void tile(const PanelActivations& a, int64_t p0, int64_t b0, int64_t b1,
                                const uint8_t* const* wr, const int64_t* rows,
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
  if (b0 == 0) {
#pragma GCC unroll 16
    for (int n = 0; n < NR; ++n)
#pragma GCC unroll 16
      for (int p = 0; p < MP; ++p)
        _mm256_storeu_ps(acc_out + p * ldp + n * kLanes, _mm256_setzero_ps());
  }
  // maddubs, bits 4: the block's products in int16 (dp), widened at its end.
  constexpr bool kInt16 = !kVnni && (kMode == Mode::Int4 || kMode == Mode::Int4Zeros);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = b0; b < b1; ++b) {
    __m256i dp[NR][MP];
#pragma GCC unroll 16
    for (int n = 0; n < NR; ++n)
#pragma GCC unroll 16
      for (int p = 0; p < MP; ++p)
        dp[n][p] =
            kVnni ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xc + p * ps + b * kLanes))
                  : _mm256_setzero_si256();
    if constexpr (kVnni && kMode == Mode::Int4Zeros) {
#pragma GCC unroll 16
      for (int n = 0; n < NR; ++n) {
        const __m256i z = _mm256_set1_epi32(zp_row[n][g]);
#pragma GCC unroll 16
        for (int p = 0; p < MP; ++p) dp[n][p] = _mm256_mullo_epi32(z, dp[n][p]);
      }
    }
    const int8_t* xb = xq + b * 8 * 32;
    const int64_t off = b * kBlock;
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      __m256i xv[MP];
#pragma GCC unroll 16
      for (int p = 0; p < MP; ++p)
        xv[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + p * pb + s * 32));
#pragma GCC unroll 16
      for (int n = 0; n < NR; ++n) {
        int32_t word;
        std::memcpy(&word, wr[n] + off + 4 * s, 4);
        const __m256i wv = _mm256_set1_epi32(word);
        if constexpr (kVnni) {
#if INGOT_GEMM_YMM_VNNI
#pragma GCC unroll 16
          for (int p = 0; p < MP; ++p) dp[n][p] = INGOT_GEMM_YMM_DPBUSD(dp[n][p], wv, xv[p]);
#endif
        } else if constexpr (kInt16) {
#pragma GCC unroll 16
          for (int p = 0; p < MP; ++p)
            dp[n][p] = _mm256_add_epi16(dp[n][p], _mm256_maddubs_epi16(wv, xv[p]));
        } else {
          const __m256i sw = _mm256_xor_si256(wv, _mm256_set1_epi8(char(0x80)));  // w - 128
          const __m256i aw = _mm256_abs_epi8(sw);
#pragma GCC unroll 16
          for (int p = 0; p < MP; ++p)
            dp[n][p] = _mm256_add_epi32(
                dp[n][p],
                _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(xv[p], sw)), ones));
        }
      }
    }
    if constexpr (kInt16) {  // int16 pairs to int32, plus the zero-point term
#pragma GCC unroll 16
      for (int p = 0; p < MP; ++p) {
        const __m256i corr =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xc + p * ps + b * kLanes));
#pragma GCC unroll 16
        for (int n = 0; n < NR; ++n) {
          const __m256i c = kMode == Mode::Int4Zeros
                                ? _mm256_mullo_epi32(_mm256_set1_epi32(zp_row[n][g]), corr)
                                : corr;
          dp[n][p] = _mm256_add_epi32(c, _mm256_madd_epi16(dp[n][p], ones));
        }
      }
    }
#pragma GCC unroll 16
    for (int p = 0; p < MP; ++p) {
      const __m256 sx = _mm256_loadu_ps(xs + p * ps + b * kLanes);
#pragma GCC unroll 16
      for (int n = 0; n < NR; ++n) {
        const __m256 s = kMode == Mode::Int8 ? sx : _mm256_mul_ps(sx, _mm256_set1_ps(ws_row[n][g]));
        float* acc = acc_out + p * ldp + n * kLanes;
        _mm256_storeu_ps(acc,
                         _mm256_fmadd_ps(_mm256_cvtepi32_ps(dp[n][p]), s, _mm256_loadu_ps(acc)));
      }
    }
    if (++in_group == per_group) {
      in_group = 0;
      ++g;
    }
  }
}

// W rows [r0, r1) against every panel: per block of kBlockRows<NR> rows (unpacked or padded
// into `buf` when the stored rows cannot be read 32 * blocks bytes at a time), tiles of NR
// rows x MP panels (the panels past the last multiple of MP with MP = 1).
template <int NR, int MP, Mode kMode>
INGOT_GEMM_YMM_KERNEL void gemm_rows(const PanelActivations& a, const PackedWeight& w, int64_t r0,
                                     int64_t r1, float* y, int64_t ldy) {
  constexpr int64_t kRows = kBlockRows<NR>;
  const int64_t kp = a.blocks * kBlock;
  const bool direct = w.bits == 8 && w.k == kp;
  std::vector<uint8_t> buf(direct ? 0 : size_t(kRows * kp));
  // Partial sums of a row block: [panel][row in block][lane].
  const int64_t ldp = kRows * kLanes;
  std::vector<float> partial(size_t(a.panels * ldp));
  for (int64_t rb = r0; rb < r1; rb += kRows) {
    const int64_t re = std::min(r1, rb + kRows);
    const uint8_t* base = w.q + rb * w.k;
    int64_t ld = w.k;
    if (!direct) {
      for (int64_t r = rb; r < re; ++r) {
        uint8_t* dst = buf.data() + (r - rb) * kp;
        if (w.bits == 4) {
          unpack_int4_row(w.q + r * (w.k / 2), w.k, dst);
        } else {
          std::memcpy(dst, w.q + r * w.k, size_t(w.k));
          std::memset(dst + w.k, 128, size_t(kp - w.k));  // w - 128 = 0 (x is 0 there too)
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
            tile<NR, MP, kMode>(a, p0, b0, b1, wr, rows, w, out, ldp);
          else  // the last panels one at a time
            for (int p = 0; p < mp; ++p)
              tile<NR, 1, kMode>(a, p0 + p, b0, b1, wr, rows, w, out + p * ldp, ldp);
        }
      }
    }
    // partial[p][r - rb][L] -> y[8p + L, r] (int8: times the row's scale), x row by x row.
    for (int64_t i = 0; i < a.m; ++i) {
      const float* src = partial.data() + (i / kLanes) * ldp + i % kLanes;
      float* dst = y + i * ldy;
      for (int64_t r = rb; r < re; ++r)
        dst[r] = src[(r - rb) * kLanes] * (kMode == Mode::Int8 ? w.scales[r] : 1.0f);
    }
  }
}

// Tile shapes, measured on Zen 4 under INGOT_ISA=avx2 (docs/quantization.md, "Prefill GEMM
// on the ymm tables"): one panel (m <= 8) takes 4 rows x 1 panel (6 rows level, 2 and 8 up
// to 30% slower); more panels take 4 rows x 2 (8 int16 / int32 accumulators; 2x2, 2x3 and
// 4x1 were 5-38% slower for int4 at m = 128), except 8-bit weights without VNNI: 2 x 2,
// since the sign trick's temporaries (w - 128, |w - 128|, the signed x) and its two
// constants do not fit next to 8 accumulators in 16 ymm registers (4x2 level to 8% slower,
// 3x2 and 4x1 9-21%). The AVX-VNNI compile takes 4 x 2 for every mode (not timed: no
// AVX-VNNI CPU here; its registers are those of the int4 maddubs case).
template <Mode kMode>
void gemm_mode(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy) {
  constexpr bool kSignTrick = !kVnni && (kMode == Mode::Int8 || kMode == Mode::Int8Groups);
  parallel_for(0, w.n, 32, [&](int64_t r0, int64_t r1) {
    if (a.panels == 1)
      gemm_rows<4, 1, kMode>(a, w, r0, r1, y, ldy);
    else if constexpr (kSignTrick)
      gemm_rows<2, 2, kMode>(a, w, r0, r1, y, ldy);
    else
      gemm_rows<4, 2, kMode>(a, w, r0, r1, y, ldy);
  });
}

void gemm_ymm(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy) {
  if (w.bits == 8 && w.group == w.k)
    gemm_mode<Mode::Int8>(a, w, y, ldy);
  else if (w.bits == 8)
    gemm_mode<Mode::Int8Groups>(a, w, y, ldy);
  else if (w.zeros)
    gemm_mode<Mode::Int4Zeros>(a, w, y, ldy);
  else
    gemm_mode<Mode::Int4>(a, w, y, ldy);
}

}  // namespace

}  // namespace ingot::cpu::detail
