// bf16 x bf16 GEMM in the `linear` layout with AVX512_BF16 (vdpbf16ps): the prefill
// route of bf16 models (m > kGemvMaxM rows of activations).
//
//   out[i, j - n0] = sum_p a[i, p] * w[j, p]     i < m, n0 <= j < n1 (f32 out)
//
// Both operands run along k (the activation rows and the weight rows), so no packing:
// a register tile of kTileM activation rows x kTileN weight rows keeps kTileM * kTileN
// accumulators, each summing 32 products of one (row, weight row) pair per vdpbf16ps
// (16 lanes x 2 bf16). Per 32-element step of k: kTileM + kTileN vector loads for
// kTileM * kTileN dot-product instructions. At the end of a tile each accumulator is
// summed across its lanes (reduce4: 4 vectors to 4 sums in 14 instructions).
//
// Blocking (per call, i.e. per block of weight rows the driver hands one thread):
//   for pc (kKc steps of k)             the weight block [n1 - n0, kc] stays in L2
//     for i0 (kTileM activation rows)   those rows' [kTileM, kc] stay in L1
//       for j0 (kTileN weight rows)     weight rows streamed from L2
// The first pc step writes `out`, later ones add to it.
//
// Products of bf16 values are exact in f32 and sums are f32 (vdpbf16ps rounds to nearest
// even, treats bf16 denormal inputs as zero and flushes denormal results): the same
// numerics as converting both to f32 and accumulating with FMA, up to summation order
// and denormals.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "ingot/ops/cpu/gemm_internal.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ingot::cpu::detail {
namespace {

constexpr int kTileM = 4;      // activation rows per register tile
constexpr int kTileN = 6;      // weight rows per register tile (24 accumulators)
constexpr int64_t kKc = 1024;  // k per block: a weight tile's rows (6 x 2 KiB) fit in L1

// [sum(a), sum(b), sum(c), sum(d)] of four 16-lane vectors.
INGOT_TARGET_AVX512 inline __m128 reduce4(__m512 a, __m512 b, __m512 c, __m512 d) {
  // Halves: lanes 0-7 partial sums of a (resp. c), lanes 8-15 of b (resp. d).
  const __m512 ab =
      _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
  const __m512 cd =
      _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
  // 128-bit lane q holds 4 partial sums of vector q (a, b, c, d).
  const __m512 t =
      _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
  const __m512 u = _mm512_add_ps(t, _mm512_permute_ps(t, 0x4E));
  const __m512 v = _mm512_add_ps(u, _mm512_permute_ps(u, 0xB1));  // every element = lane's sum
  const __m512i idx = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
  return _mm512_castps512_ps128(_mm512_permutexvar_ps(idx, v));
}

// acc[i * NR + r] += a row i . w row r over 32 elements of k from p (lanes past `mask`
// read as zero). Forced inline so the accumulators stay in registers.
template <int MR, int NR>
INGOT_TARGET_AVX512 __attribute__((always_inline)) inline void tile_step(
    __m512 (&acc)[MR * NR], const uint16_t* a, int64_t lda, const uint16_t* w, int64_t ldw,
    int64_t p, __mmask32 mask) {
  __m512bh x[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) x[i] = (__m512bh)_mm512_maskz_loadu_epi16(mask, a + i * lda + p);
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
    const __m512bh wv = (__m512bh)_mm512_maskz_loadu_epi16(mask, w + r * ldw + p);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) acc[i * NR + r] = _mm512_dpbf16_ps(acc[i * NR + r], x[i], wv);
  }
}

// One register tile: MR activation rows x NR weight rows over kc elements of k;
// out[i * ldo + r] = (accumulate ? out : 0) + sum.
template <int MR, int NR>
INGOT_TARGET_AVX512 void tile(int64_t kc, const uint16_t* a, int64_t lda, const uint16_t* w,
                              int64_t ldw, float* out, int64_t ldo, bool accumulate) {
  __m512 acc[MR * NR];
#pragma GCC unroll 32
  for (int q = 0; q < MR * NR; ++q) acc[q] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 32 <= kc; p += 32) tile_step<MR, NR>(acc, a, lda, w, ldw, p, ~__mmask32(0));
  if (p < kc) tile_step<MR, NR>(acc, a, lda, w, ldw, p, __mmask32((uint64_t(1) << (kc - p)) - 1));

  constexpr int kQ = (MR * NR + 3) / 4 * 4;
  alignas(16) float sums[kQ];
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int q = 0; q < kQ; q += 4) {
    const __m512 v0 = acc[q];
    const __m512 v1 = q + 1 < MR * NR ? acc[q + 1] : zero;
    const __m512 v2 = q + 2 < MR * NR ? acc[q + 2] : zero;
    const __m512 v3 = q + 3 < MR * NR ? acc[q + 3] : zero;
    _mm_store_ps(sums + q, reduce4(v0, v1, v2, v3));
  }
  for (int i = 0; i < MR; ++i)
    for (int r = 0; r < NR; ++r) {
      float& o = out[i * ldo + r];
      o = accumulate ? o + sums[i * NR + r] : sums[i * NR + r];
    }
}

using TileFn = void (*)(int64_t, const uint16_t*, int64_t, const uint16_t*, int64_t, float*,
                        int64_t, bool);

// tile<MR, NR> for the edges: kTiles[MR - 1][NR - 1].
template <int MR, int... NR>
constexpr auto tile_row(std::integer_sequence<int, NR...>) {
  return std::array<TileFn, sizeof...(NR)>{tile<MR, NR + 1>...};
}
template <int... MR>
constexpr auto tile_table(std::integer_sequence<int, MR...>) {
  return std::array{tile_row<MR + 1>(std::make_integer_sequence<int, kTileN>())...};
}
constexpr auto kTiles = tile_table(std::make_integer_sequence<int, kTileM>());

}  // namespace

void gemm_bf16_dot_avx512(int64_t m, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* w,
                          int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  for (int64_t pc = 0; pc < k; pc += kKc) {
    const int64_t kc = std::min(kKc, k - pc);
    const bool accumulate = pc > 0;
    for (int64_t i0 = 0; i0 < m; i0 += kTileM) {
      const int mr = int(std::min<int64_t>(kTileM, m - i0));
      const uint16_t* ai = a + i0 * lda + pc;
      float* oi = out + i0 * ldo;
      int64_t j = n0;
      if (mr == kTileM) {
        for (; j + kTileN <= n1; j += kTileN)
          tile<kTileM, kTileN>(kc, ai, lda, w + j * ldw + pc, ldw, oi + (j - n0), ldo, accumulate);
      }
      for (; j < n1; j += kTileN) {
        const int nr = int(std::min<int64_t>(kTileN, n1 - j));
        kTiles[size_t(mr - 1)][size_t(nr - 1)](kc, ai, lda, w + j * ldw + pc, ldw, oi + (j - n0),
                                               ldo, accumulate);
      }
    }
  }
}

}  // namespace ingot::cpu::detail
