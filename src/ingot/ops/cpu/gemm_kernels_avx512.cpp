// AVX-512 kernels: the register-blocked f32 micro-kernel (and its edge tiles), the
// transposing B packer for the `linear` layout (W[n, k] rows contiguous along k), the GEMV
// row streamer and the GEMV over weights packed once as panels.
// Every function carries INGOT_TARGET_AVX512 and is only reached after the run-time
// CPU check in gemm.cpp.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/gemm_internal.h"

// GCC 12's AVX-512 headers build some results from a deliberately uninitialised vector
// (_mm512_undefined_*), which trips these warnings once inlined here.
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ingot::cpu::detail {
namespace {

constexpr int kMr = 14;        // rows of the C tile (broadcasts of A)
constexpr int kNv = 2;         // zmm vectors per C row
constexpr int kNr = 16 * kNv;  // columns of the C tile

// ---- micro-kernel -----------------------------------------------------------------------

// C[MR, 16*NV] tile: MR*NV accumulators, NV B loads and MR broadcasts per k step. The A
// panel holds AS >= MR rows per k step (an edge tile of MR < kMr rows reads the first MR
// rows of a full-height panel).
template <int MR, int NV, int AS = MR>
INGOT_TARGET_AVX512 void micro_avx512(int64_t kc, const float* ap, const float* bp, float* c,
                                      int64_t ldc, float alpha, float beta) {
  constexpr int NR = 16 * NV;
  __m512 acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);

  for (int64_t p = 0; p < kc; ++p) {
    __m512 b[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) b[j] = _mm512_load_ps(bp + j * 16);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const __m512 a = _mm512_set1_ps(ap[i]);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(a, b[j], acc[i][j]);
    }
    ap += AS;
    bp += NR;
  }

  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j)
        _mm512_storeu_ps(c + i * ldc + j * 16, _mm512_mul_ps(va, acc[i][j]));
  } else {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        float* cp = c + i * ldc + j * 16;
        _mm512_storeu_ps(cp,
                         _mm512_fmadd_ps(va, acc[i][j], _mm512_mul_ps(vb, _mm512_loadu_ps(cp))));
      }
  }
}

// ---- loads of 16 elements as f32 --------------------------------------------------------

template <DType D>
INGOT_TARGET_AVX512 inline __m512 load16(const void* base, int64_t i) {
  if constexpr (D == DType::F32) {
    return _mm512_loadu_ps(static_cast<const float*>(base) + i);
  } else {
    const __m256i h = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(base) + i));
    if constexpr (D == DType::BF16) {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      return _mm512_cvtph_ps(h);
    }
  }
}

// The first popcount(mask) elements from base + i, zeros elsewhere (no read past them).
template <DType D>
INGOT_TARGET_AVX512 inline __m512 load16_masked(const void* base, int64_t i, __mmask16 mask) {
  if constexpr (D == DType::F32) {
    return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(base) + i);
  } else {
    const __m256i h = _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(base) + i);
    if constexpr (D == DType::BF16) {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      return _mm512_cvtph_ps(h);
    }
  }
}

// ---- B packing for the linear layout ---------------------------------------------------

// In-register transpose of a 16x16 f32 block: r[i][j] -> r[j][i].
INGOT_TARGET_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d t0 = _mm512_castps_pd(t[4 * i]), t1 = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * i + 2]), t3 = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 s0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 s1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);
    const __m512 s2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 s3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
    r[j] = _mm512_shuffle_f32x4(s0, s2, 0x88);
    r[j + 4] = _mm512_shuffle_f32x4(s1, s3, 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(s0, s2, 0xdd);
    r[j + 12] = _mm512_shuffle_f32x4(s1, s3, 0xdd);
  }
}

// Transposes a strip of `valid` (<= 16) source lines, each running along k (line j at
// base + j * ld), into out[p * out_stride + lane] for p < kc and the lanes in `store`
// (lanes >= valid get zeros). 16-bit data is converted on the way.
template <DType D>
INGOT_TARGET_AVX512 void transpose_strip(const void* base, int64_t ld, int64_t valid, int64_t kc,
                                         float* out, int64_t out_stride, __mmask16 store) {
  constexpr int64_t kEsize = D == DType::F32 ? 4 : 2;
  for (int64_t p0 = 0; p0 < kc; p0 += 16) {
    const int64_t kv = std::min<int64_t>(16, kc - p0);
    const __mmask16 mask = __mmask16((1u << kv) - 1u);
    __m512 r[16];
    for (int j = 0; j < 16; ++j) {
      if (j >= valid) {
        r[j] = _mm512_setzero_ps();
        continue;
      }
      const int64_t off = j * ld + p0;
      // Lines are read in short runs; ask for the next 64 bytes of each one early.
      _mm_prefetch(static_cast<const char*>(base) + (off + 16) * kEsize + 64, _MM_HINT_T0);
      r[j] = kv == 16 ? load16<D>(base, off) : load16_masked<D>(base, off, mask);
    }
    transpose16(r);
    for (int64_t p = 0; p < kv; ++p)
      _mm512_mask_storeu_ps(out + (p0 + p) * out_stride, store, r[p]);
  }
}

// Packs `lines` source lines (line j at base + j * ld, contiguous along k) into panels of
// width w (layout in gemm_internal.h): A with rows contiguous along k, or B in the
// linear layout.
template <DType D>
INGOT_TARGET_AVX512 void pack_lines(const void* base, int64_t ld, int64_t lines, int64_t kc, int w,
                                    float* out) {
  constexpr int64_t kEsize = D == DType::F32 ? 4 : 2;
  for (int64_t q0 = 0; q0 < lines; q0 += w) {
    float* panel = out + (q0 / w) * kc * w;
    for (int h = 0; h < w; h += 16) {
      const int64_t first = q0 + h;
      const int64_t valid = std::clamp<int64_t>(lines - first, 0, 16);
      const __mmask16 store = __mmask16((1u << std::min(16, w - h)) - 1u);
      const void* src = static_cast<const char*>(base) + first * ld * kEsize;
      transpose_strip<D>(src, ld, valid, kc, panel + h, w, store);
    }
  }
}

void pack_lines_any(DType dt, const void* base, int64_t ld, int64_t lines, int64_t kc, int w,
                    float* out) {
  switch (dt) {
    case DType::F32:
      return pack_lines<DType::F32>(base, ld, lines, kc, w, out);
    case DType::BF16:
      return pack_lines<DType::BF16>(base, ld, lines, kc, w, out);
    default:
      return pack_lines<DType::F16>(base, ld, lines, kc, w, out);
  }
}

// B in the linear layout (stride_row == 1): B's columns are W's rows.
void pack_b_avx512(const MatrixView& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                   float* out) {
  if (b.stride_row != 1) return pack_b_generic(b, k0, kc, n0, nc, nr, out);
  pack_lines_any(b.dtype, elem_ptr(b.data, b.dtype, k0 + n0 * b.stride_col), b.stride_col, nc, kc,
                 nr, out);
}

// A with rows contiguous along k (stride_col == 1), the usual activation layout.
void pack_a_avx512(const MatrixView& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, int mr,
                   float* out) {
  if (a.stride_col != 1) return pack_a_generic(a, m0, mc, k0, kc, mr, out);
  pack_lines_any(a.dtype, elem_ptr(a.data, a.dtype, m0 * a.stride_row + k0), a.stride_row, mc, kc,
                 mr, out);
}

// ---- GEMV --------------------------------------------------------------------------------

// How far ahead of its loads the m = 1 kernels prefetch their weight row: software
// prefetch keeps lines in flight across the 4 KiB pages where the hardware streamer stops
// (Intel Xeon with AMX, SmolLM2 bf16 decode, interleaved: 64 -> 69-71 tok/s at 1024;
// 512 / 2048 / 4096 in between; f32 level).
constexpr int64_t kGemvPrefetchBytes = 1024;

// out[i, j] for R weight rows at once; M rows of x; see GemvDotFn.
template <DType D, int M, int R>
INGOT_TARGET_AVX512 inline void gemv_rows_block(int64_t k, const float* x, int64_t ldx,
                                                const void* w, int64_t ldw, int64_t n, float* out,
                                                int64_t ldo, int64_t j) {
  __m512 acc[M][R];
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) acc[i][r] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = load16<D>(w, (n + r) * ldw + p);
    for (int i = 0; i < M; ++i) {
      const __m512 xv = _mm512_loadu_ps(x + i * ldx + p);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_fmadd_ps(xv, wv[r], acc[i][r]);
    }
  }
  if (p < k) {
    const __mmask16 mask = __mmask16((1u << (k - p)) - 1u);
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = load16_masked<D>(w, (n + r) * ldw + p, mask);
    for (int i = 0; i < M; ++i) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + i * ldx + p);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_fmadd_ps(xv, wv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) out[i * ldo + j + r] = _mm512_reduce_add_ps(acc[i][r]);
}

// m = 1 (decode): one weight row at a time, so a thread's range of rows is one
// sequential read. This EPYC's prefetchers follow that far better than rows read side by
// side: in the real decode (Qwen3-0.6B shape, bf16, 2 threads, interleaved A/B) one row
// at a time on huge pages gave 21.5 tok/s where 8 rows side by side gave 12.5 (see
// docs/runtime.md). Four accumulators split k so the FMA latency chain is not the limit.
template <DType D>
INGOT_TARGET_AVX512 inline void gemv_row(int64_t k, const float* x, const void* w, int64_t ldw,
                                         int64_t n, float* out) {
  constexpr int A = 4;
  constexpr int64_t kElemBytes = D == DType::F32 ? 4 : 2;
  __m512 acc[A];
  for (int a = 0; a < A; ++a) acc[a] = _mm512_setzero_ps();
  const int64_t row = n * ldw;
  const char* bytes = static_cast<const char*>(w) + row * kElemBytes;
  int64_t p = 0;
  for (; p + 16 * A <= k; p += 16 * A) {
    // One prefetch per cache line of this step, kGemvPrefetchBytes ahead (past the row's
    // end it reaches the next row's start, which the linear layout reads next).
    for (int64_t line = 0; line < 16 * A * kElemBytes; line += 64)
      _mm_prefetch(bytes + p * kElemBytes + line + kGemvPrefetchBytes, _MM_HINT_T0);
    for (int a = 0; a < A; ++a)
      acc[a] =
          _mm512_fmadd_ps(_mm512_loadu_ps(x + p + 16 * a), load16<D>(w, row + p + 16 * a), acc[a]);
  }
  for (; p + 16 <= k; p += 16)
    acc[0] = _mm512_fmadd_ps(_mm512_loadu_ps(x + p), load16<D>(w, row + p), acc[0]);
  if (p < k) {
    const __mmask16 mask = __mmask16((1u << (k - p)) - 1u);
    acc[0] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, x + p), load16_masked<D>(w, row + p, mask),
                             acc[0]);
  }
  *out = _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

template <DType D, int M>
INGOT_TARGET_AVX512 void gemv_dot_t(int64_t k, const float* x, int64_t ldx, const void* w,
                                    int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  if constexpr (M == 1) {
    for (int64_t n = n0; n < n1; ++n) gemv_row<D>(k, x, w, ldw, n, out + (n - n0));
    return;
  }
  // m > 1 (a short prefill in groups of rows of x, W re-read from L2): R weight rows per
  // step so each x load feeds R FMAs; M * R accumulators must fit in the 32 zmm
  // registers next to the R weight vectors.
  constexpr int R = M <= 2 ? 8 : 4;
  int64_t n = n0;
  for (; n + R <= n1; n += R) gemv_rows_block<D, M, R>(k, x, ldx, w, ldw, n, out, ldo, n - n0);
  for (; n < n1; ++n) gemv_rows_block<D, M, 1>(k, x, ldx, w, ldw, n, out, ldo, n - n0);
}

template <DType D>
void gemv_dot_dtype(int64_t m, int64_t k, const float* x, int64_t ldx, const void* w, int64_t ldw,
                    int64_t n0, int64_t n1, float* out, int64_t ldo) {
  switch (m) {
    case 1:
      return gemv_dot_t<D, 1>(k, x, ldx, w, ldw, n0, n1, out, ldo);
    case 2:
      return gemv_dot_t<D, 2>(k, x, ldx, w, ldw, n0, n1, out, ldo);
    case 3:
      return gemv_dot_t<D, 3>(k, x, ldx, w, ldw, n0, n1, out, ldo);
    default:
      return gemv_dot_t<D, 4>(k, x, ldx, w, ldw, n0, n1, out, ldo);
  }
}

void gemv_dot_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const void* w,
                     DType w_dtype, int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  switch (w_dtype) {
    case DType::F32:
      return gemv_dot_dtype<DType::F32>(m, k, x, ldx, w, ldw, n0, n1, out, ldo);
    case DType::BF16:
      return gemv_dot_dtype<DType::BF16>(m, k, x, ldx, w, ldw, n0, n1, out, ldo);
    default:
      return gemv_dot_dtype<DType::F16>(m, k, x, ldx, w, ldw, n0, n1, out, ldo);
  }
}

// bf16 weights with AVX512_BF16: x arrives split as x ≈ xh + xl (two bf16 arrays, rows
// ldx apart, zero-padded to a multiple of 32), and each 32-element step is two
// vdpbf16ps per weight row. Products of bf16 values are exact in f32, so the only extra
// error is x's truncation to ~16 mantissa bits (relative 2^-17). xl == nullptr: x is
// exactly bf16 (a bf16 activation), one vdpbf16ps per step (Split = false).
template <int M, int R, bool Split>
INGOT_TARGET_AVX512 inline void gemv_bf16_block(int64_t k, const uint16_t* xh, const uint16_t* xl,
                                                int64_t ldx, const uint16_t* w, int64_t ldw,
                                                int64_t n, float* out, int64_t ldo, int64_t j) {
  __m512 acc[M][R];
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) acc[i][r] = _mm512_setzero_ps();
  auto step = [&](int64_t p, __mmask32 mask) INGOT_TARGET_AVX512 {
    __m512bh wv[R];
    for (int r = 0; r < R; ++r)
      wv[r] = (__m512bh)_mm512_maskz_loadu_epi16(mask, w + (n + r) * ldw + p);
    for (int i = 0; i < M; ++i) {
      const __m512bh h = (__m512bh)_mm512_loadu_si512(xh + i * ldx + p);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wv[r], h);
      if constexpr (Split) {
        const __m512bh l = (__m512bh)_mm512_loadu_si512(xl + i * ldx + p);
        for (int r = 0; r < R; ++r) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wv[r], l);
      }
    }
  };
  int64_t p = 0;
  for (; p + 32 <= k; p += 32) step(p, ~__mmask32(0));
  if (p < k) step(p, __mmask32((uint64_t(1) << (k - p)) - 1));
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) out[i * ldo + j + r] = _mm512_reduce_add_ps(acc[i][r]);
}

// m = 1 with vdpbf16ps: one weight row at a time, as gemv_row. Two accumulators split k
// and the low halves of x accumulate apart from the high halves, so no vdpbf16ps waits
// for the previous one.
template <bool Split>
INGOT_TARGET_AVX512 inline void gemv_bf16_row(int64_t k, const uint16_t* xh, const uint16_t* xl,
                                              const uint16_t* w, int64_t ldw, int64_t n,
                                              float* out) {
  __m512 hi[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  __m512 lo[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  const uint16_t* row = w + n * ldw;
  const char* bytes = reinterpret_cast<const char*>(row);
  auto step = [&](int64_t p, int a, __mmask32 mask) INGOT_TARGET_AVX512 {
    const __m512bh wv = (__m512bh)_mm512_maskz_loadu_epi16(mask, row + p);
    hi[a] = _mm512_dpbf16_ps(hi[a], wv, (__m512bh)_mm512_loadu_si512(xh + p));
    if constexpr (Split) lo[a] = _mm512_dpbf16_ps(lo[a], wv, (__m512bh)_mm512_loadu_si512(xl + p));
  };
  int64_t p = 0;
  for (; p + 64 <= k; p += 64) {
    // The step's two cache lines, kGemvPrefetchBytes ahead (as gemv_row).
    _mm_prefetch(bytes + 2 * p + kGemvPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(bytes + 2 * p + 64 + kGemvPrefetchBytes, _MM_HINT_T0);
    step(p, 0, ~__mmask32(0));
    step(p + 32, 1, ~__mmask32(0));
  }
  for (; p + 32 <= k; p += 32) step(p, 0, ~__mmask32(0));
  if (p < k) step(p, 0, __mmask32((uint64_t(1) << (k - p)) - 1));
  *out =
      _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(hi[0], hi[1]), _mm512_add_ps(lo[0], lo[1])));
}

template <int M>
INGOT_TARGET_AVX512 void gemv_bf16_t(int64_t k, const uint16_t* xh, const uint16_t* xl, int64_t ldx,
                                     const uint16_t* w, int64_t ldw, int64_t n0, int64_t n1,
                                     float* out, int64_t ldo) {
  if constexpr (M == 1) {
    for (int64_t n = n0; n < n1; ++n) {
      if (xl == nullptr) {
        gemv_bf16_row<false>(k, xh, xl, w, ldw, n, out + (n - n0));
      } else {
        gemv_bf16_row<true>(k, xh, xl, w, ldw, n, out + (n - n0));
      }
    }
    return;
  }
  constexpr int R = M <= 2 ? 8 : 4;
  int64_t n = n0;
  if (xl == nullptr) {
    for (; n + R <= n1; n += R)
      gemv_bf16_block<M, R, false>(k, xh, xl, ldx, w, ldw, n, out, ldo, n - n0);
    for (; n < n1; ++n) gemv_bf16_block<M, 1, false>(k, xh, xl, ldx, w, ldw, n, out, ldo, n - n0);
    return;
  }
  for (; n + R <= n1; n += R)
    gemv_bf16_block<M, R, true>(k, xh, xl, ldx, w, ldw, n, out, ldo, n - n0);
  for (; n < n1; ++n) gemv_bf16_block<M, 1, true>(k, xh, xl, ldx, w, ldw, n, out, ldo, n - n0);
}

void gemv_bf16_avx512(int64_t m, int64_t k, const uint16_t* xh, const uint16_t* xl, int64_t ldx,
                      const uint16_t* w, int64_t ldw, int64_t n0, int64_t n1, float* out,
                      int64_t ldo) {
  switch (m) {
    case 1:
      return gemv_bf16_t<1>(k, xh, xl, ldx, w, ldw, n0, n1, out, ldo);
    case 2:
      return gemv_bf16_t<2>(k, xh, xl, ldx, w, ldw, n0, n1, out, ldo);
    case 3:
      return gemv_bf16_t<3>(k, xh, xl, ldx, w, ldw, n0, n1, out, ldo);
    default:
      return gemv_bf16_t<4>(k, xh, xl, ldx, w, ldw, n0, n1, out, ldo);
  }
}

// ---- weights packed once as panels (gemm.h PanelWeight: [k][kNr] per panel) -------------

// acc[i] += x[i, p] * panel row p (kNr floats), i < M.
template <int M>
INGOT_TARGET_AVX512 __attribute__((always_inline)) inline void panel_step(const float* panel,
                                                                          const float* x,
                                                                          int64_t ldx, int64_t p,
                                                                          __m512 (&acc)[M][kNv]) {
  __m512 b[kNv];
  for (int j = 0; j < kNv; ++j) b[j] = _mm512_load_ps(panel + p * kNr + j * 16);
  for (int i = 0; i < M; ++i) {
    const __m512 xv = _mm512_set1_ps(x[i * ldx + p]);
    for (int j = 0; j < kNv; ++j) acc[i][j] = _mm512_fmadd_ps(xv, b[j], acc[i][j]);
  }
}

// M rows of x against one panel; see GemvPanelFn. Unrolled U times along k so every
// output vector has U independent sums (at m = 1 a plain loop would wait on the FMA
// latency, not on the panel's stream), and the panel prefetched kGemvPrefetchBytes ahead
// (past its end: the next panel, which gemv_panels reads next).
template <int M>
INGOT_TARGET_AVX512 void gemv_panel_t(int64_t k, const float* x, int64_t ldx, const float* panel,
                                      float* out) {
  constexpr int U = M == 1 ? 4 : M == 2 ? 2 : 1;
  constexpr int64_t kRowBytes = kNr * int64_t(sizeof(float));
  const char* bytes = reinterpret_cast<const char*>(panel);
  __m512 acc[U][M][kNv];
  for (int u = 0; u < U; ++u)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < kNv; ++j) acc[u][i][j] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + U <= k; p += U) {
    for (int64_t line = 0; line < U * kRowBytes; line += 64)
      _mm_prefetch(bytes + p * kRowBytes + line + kGemvPrefetchBytes, _MM_HINT_T0);
    for (int u = 0; u < U; ++u) panel_step<M>(panel, x, ldx, p + u, acc[u]);
  }
  for (; p < k; ++p) panel_step<M>(panel, x, ldx, p, acc[0]);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < kNv; ++j) {
      __m512 s = acc[0][i][j];
      for (int u = 1; u < U; ++u) s = _mm512_add_ps(s, acc[u][i][j]);
      _mm512_storeu_ps(out + i * kNr + j * 16, s);
    }
}

void gemv_panel_avx512(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel,
                       float* out) {
  switch (m) {
    case 1:
      return gemv_panel_t<1>(k, x, ldx, panel, out);
    case 2:
      return gemv_panel_t<2>(k, x, ldx, panel, out);
    case 3:
      return gemv_panel_t<3>(k, x, ldx, panel, out);
    default:
      return gemv_panel_t<4>(k, x, ldx, panel, out);
  }
}

// Edge tiles of 1 .. kMr - 1 rows (a 16-row prefill is 14 + 2 rows, not 28).
template <size_t... R>
constexpr std::array<MicroKernelFn, sizeof...(R)> make_edge_tiles(std::index_sequence<R...>) {
  return {micro_avx512<int(R) + 1, kNv, kMr>...};
}
constexpr std::array<MicroKernelFn, kMr - 1> kEdgeTiles =
    make_edge_tiles(std::make_index_sequence<kMr - 1>());

}  // namespace

const GemmKernels& avx512_kernels() {
  // Blocks measured on Zen 4 (1 MiB L2, 32 MiB L3) at 512x4096x14336 and 128x1024x3072:
  // the A block (168 x 512 f32, 344 KiB) stays in L2, the B block (512 x 4096, 8 MiB)
  // in L3; kc = 512 beat 256/384 by 3-5% (fewer C tile reloads). The panel GEMV reads a
  // thread's panels as one stream, in order, prefetching ahead: on Zen 4 (SmolLM2 f32
  // decode, interleaved A/B) four streams at once were 4% slower, no prefetch 8% slower.
  static const GemmKernels table{GemmIsa::Avx512,
                                 kMr,
                                 kNr,
                                 /*mc=*/kMr * 12,
                                 /*kc=*/512,
                                 /*nc=*/kNr * 128,
                                 micro_avx512<kMr, kNv>,
                                 pack_a_avx512,
                                 pack_b_avx512,
                                 gemv_dot_avx512,
                                 cpu_features().avx512bf16 ? gemv_bf16_avx512 : nullptr,
                                 cpu_features().avx512bf16 ? gemm_bf16_dot_avx512 : nullptr,
                                 gemv_panel_avx512,
                                 /*gemv_panel_streams=*/nullptr,
                                 /*gemv_row_streams=*/nullptr,
                                 kEdgeTiles.data()};
  return table;
}

}  // namespace ingot::cpu::detail
