// AVX2 + FMA kernels: a 6x16 f32 micro-kernel, the transposing packers for operands
// contiguous along k (A rows, B in the linear layout; 16-bit data converted on the way)
// and the GEMV row streamer. Every function carries INGOT_TARGET_AVX2 and is only reached
// after the run-time CPU check in gemm.cpp.
#include <immintrin.h>

#include <algorithm>

#include "ingot/ops/cpu/avx2_math.h"
#include "ingot/ops/cpu/gemm_internal.h"

namespace ingot::cpu::detail {
namespace {

constexpr int kMr = 6;
constexpr int kNv = 2;
constexpr int kNr = 8 * kNv;

// C[MR, 8*NV] tile; see MicroKernelFn. The A panel holds AS >= MR rows per k step (an
// edge tile of MR < kMr rows reads the first MR rows of a full-height panel).
template <int MR, int NV, int AS = MR>
INGOT_TARGET_AVX2 void micro_avx2(int64_t kc, const float* ap, const float* bp, float* c,
                                  int64_t ldc, float alpha, float beta) {
  constexpr int NR = 8 * NV;
  __m256 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    __m256 b[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) b[j] = _mm256_load_ps(bp + j * 8);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m256 a = _mm256_broadcast_ss(ap + i);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm256_fmadd_ps(a, b[j], acc[i][j]);
    }
    ap += AS;
    bp += NR;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  const __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      float* cp = c + i * ldc + j * 8;
      __m256 v = _mm256_mul_ps(va, acc[i][j]);
      if (beta != 0.0f) v = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cp), v);
      _mm256_storeu_ps(cp, v);
    }
}

template <DType D>
INGOT_TARGET_AVX2 inline __m256 load8(const void* base, int64_t i) {
  if constexpr (D == DType::F32) {
    return _mm256_loadu_ps(static_cast<const float*>(base) + i);
  } else {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(base) + i));
    if constexpr (D == DType::BF16) {
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
      return _mm256_cvtph_ps(h);
    }
  }
}

// ---- packing of operands contiguous along k ------------------------------------------

// In-register transpose of an 8x8 f32 block: r[i][j] -> r[j][i].
INGOT_TARGET_AVX2 inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    r[j + 4] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
}

// Lanes [0, count) set, for maskstore.
INGOT_TARGET_AVX2 inline __m256i lane_mask(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Transposes a strip of `valid` (<= 8) source lines, each running along k (line j at
// base + j * ld), into out[p * out_stride + lane] for p < kc and lanes < `store` (lanes
// >= valid get zeros). 16-bit data is converted on the way; a k tail shorter than 8 is
// read element by element (no read past a line's end).
template <DType D>
INGOT_TARGET_AVX2 void transpose_strip(const void* base, int64_t ld, int64_t valid, int64_t kc,
                                       float* out, int64_t out_stride, int64_t store) {
  constexpr int64_t kEsize = D == DType::F32 ? 4 : 2;
  const __m256i mask = lane_mask(store);
  for (int64_t p0 = 0; p0 < kc; p0 += 8) {
    const int64_t kv = std::min<int64_t>(8, kc - p0);
    __m256 r[8];
    for (int j = 0; j < 8; ++j) {
      if (j >= valid) {
        r[j] = _mm256_setzero_ps();
        continue;
      }
      const int64_t off = j * ld + p0;
      if (kv == 8) {
        // Lines are read in short runs; ask for a later part of each one early.
        _mm_prefetch(static_cast<const char*>(base) + (off + 8) * kEsize + 64, _MM_HINT_T0);
        r[j] = load8<D>(base, off);
      } else {
        alignas(32) float tail[8] = {};
        for (int64_t p = 0; p < kv; ++p) tail[p] = load_as_float(base, D, off + p);
        r[j] = _mm256_load_ps(tail);
      }
    }
    transpose8(r);
    for (int64_t p = 0; p < kv; ++p) {
      float* dst = out + (p0 + p) * out_stride;
      if (store == 8)
        _mm256_storeu_ps(dst, r[p]);
      else
        _mm256_maskstore_ps(dst, mask, r[p]);
    }
  }
}

// Packs `lines` source lines (line j at base + j * ld, contiguous along k) into panels of
// width w (layout in gemm_internal.h): A with rows contiguous along k, or B in the
// linear layout. A strip may read up to 7 lines past its panel (never past `lines`).
template <DType D>
INGOT_TARGET_AVX2 void pack_lines(const void* base, int64_t ld, int64_t lines, int64_t kc, int w,
                                  float* out) {
  constexpr int64_t kEsize = D == DType::F32 ? 4 : 2;
  for (int64_t q0 = 0; q0 < lines; q0 += w) {
    float* panel = out + (q0 / w) * kc * w;
    for (int h = 0; h < w; h += 8) {
      const int64_t first = q0 + h;
      const int64_t valid = std::clamp<int64_t>(lines - first, 0, 8);
      const void* src = static_cast<const char*>(base) + first * ld * kEsize;
      transpose_strip<D>(src, ld, valid, kc, panel + h, w, std::min(8, w - h));
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
void pack_b_avx2(const MatrixView& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                 float* out) {
  if (b.stride_row != 1) return pack_b_generic(b, k0, kc, n0, nc, nr, out);
  pack_lines_any(b.dtype, elem_ptr(b.data, b.dtype, k0 + n0 * b.stride_col), b.stride_col, nc, kc,
                 nr, out);
}

// A with rows contiguous along k (stride_col == 1), the usual activation layout.
void pack_a_avx2(const MatrixView& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, int mr,
                 float* out) {
  if (a.stride_col != 1) return pack_a_generic(a, m0, mc, k0, kc, mr, out);
  pack_lines_any(a.dtype, elem_ptr(a.data, a.dtype, m0 * a.stride_row + k0), a.stride_row, mc, kc,
                 mr, out);
}

// ---- GEMV --------------------------------------------------------------------------------

// R weight rows against M rows of x; the k tail (< 8) is done in scalar.
template <DType D, int M, int R>
INGOT_TARGET_AVX2 inline void gemv_rows_block(int64_t k, const float* x, int64_t ldx, const void* w,
                                              int64_t ldw, int64_t n, float* out, int64_t ldo,
                                              int64_t j, DType dt) {
  __m256 acc[M][R];
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) acc[i][r] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) {
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = load8<D>(w, (n + r) * ldw + p);
    for (int i = 0; i < M; ++i) {
      const __m256 xv = _mm256_loadu_ps(x + i * ldx + p);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm256_fmadd_ps(xv, wv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) {
      float s = hsum256(acc[i][r]);
      for (int64_t q = p; q < k; ++q) s += x[i * ldx + q] * load_as_float(w, dt, (n + r) * ldw + q);
      out[i * ldo + j + r] = s;
    }
}

// m = 1 (decode): one weight row at a time, so a thread's range of rows is one
// sequential read that the hardware prefetchers follow (rows read side by side are
// several short interleaved streams; docs/runtime.md). Four accumulators split k so the
// FMA latency chain is not the limit.
template <DType D>
INGOT_TARGET_AVX2 inline float gemv_row(int64_t k, const float* x, const void* w, int64_t row) {
  constexpr int A = 4;
  __m256 acc[A];
  for (int a = 0; a < A; ++a) acc[a] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 * A <= k; p += 8 * A)
    for (int a = 0; a < A; ++a)
      acc[a] =
          _mm256_fmadd_ps(_mm256_loadu_ps(x + p + 8 * a), load8<D>(w, row + p + 8 * a), acc[a]);
  for (; p + 8 <= k; p += 8)
    acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), load8<D>(w, row + p), acc[0]);
  float s = hsum256(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; p < k; ++p) s += x[p] * load_as_float(w, D, row + p);
  return s;
}

template <DType D, int M>
INGOT_TARGET_AVX2 void gemv_dot_t(int64_t k, const float* x, int64_t ldx, const void* w,
                                  int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  if constexpr (M == 1) {
    for (int64_t n = n0; n < n1; ++n) out[n - n0] = gemv_row<D>(k, x, w, n * ldw);
    return;
  }
  // m > 1 (a short prefill in groups of rows of x, W re-read from L2): R weight rows per
  // step so each x load feeds R FMAs; M * R accumulators, R weight vectors and one x
  // vector must fit in the 16 ymm registers.
  constexpr int R = M <= 2 ? 4 : M == 3 ? 3 : 2;
  int64_t n = n0;
  for (; n + R <= n1; n += R) gemv_rows_block<D, M, R>(k, x, ldx, w, ldw, n, out, ldo, n - n0, D);
  for (; n < n1; ++n) gemv_rows_block<D, M, 1>(k, x, ldx, w, ldw, n, out, ldo, n - n0, D);
}

// kPanelStreams rows far apart (GemvRowStreamsFn): two sums per row over alternate
// 8-element steps, eight in all.
template <DType D>
INGOT_TARGET_AVX2 void gemv_row_streams_t(int64_t k, const float* x, const void* w, int64_t ldw,
                                          const int64_t* rows, float* out) {
  constexpr int S = kPanelStreams;
  int64_t base[S];
  for (int s = 0; s < S; ++s) base[s] = rows[s] * ldw;
  __m256 acc[S][2];
  for (int s = 0; s < S; ++s) acc[s][0] = acc[s][1] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + p), x1 = _mm256_loadu_ps(x + p + 8);
    for (int s = 0; s < S; ++s) {
      acc[s][0] = _mm256_fmadd_ps(x0, load8<D>(w, base[s] + p), acc[s][0]);
      acc[s][1] = _mm256_fmadd_ps(x1, load8<D>(w, base[s] + p + 8), acc[s][1]);
    }
  }
  for (; p + 8 <= k; p += 8) {
    const __m256 x0 = _mm256_loadu_ps(x + p);
    for (int s = 0; s < S; ++s)
      acc[s][0] = _mm256_fmadd_ps(x0, load8<D>(w, base[s] + p), acc[s][0]);
  }
  for (int s = 0; s < S; ++s) {
    float v = hsum256(_mm256_add_ps(acc[s][0], acc[s][1]));
    for (int64_t q = p; q < k; ++q) v += x[q] * load_as_float(w, D, base[s] + q);
    out[s] = v;
  }
}

void gemv_row_streams_avx2(int64_t k, const float* x, const void* w, DType w_dtype, int64_t ldw,
                           const int64_t* rows, float* out) {
  switch (w_dtype) {
    case DType::F32:
      return gemv_row_streams_t<DType::F32>(k, x, w, ldw, rows, out);
    case DType::BF16:
      return gemv_row_streams_t<DType::BF16>(k, x, w, ldw, rows, out);
    default:
      return gemv_row_streams_t<DType::F16>(k, x, w, ldw, rows, out);
  }
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

void gemv_dot_avx2(int64_t m, int64_t k, const float* x, int64_t ldx, const void* w, DType w_dtype,
                   int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  switch (w_dtype) {
    case DType::F32:
      return gemv_dot_dtype<DType::F32>(m, k, x, ldx, w, ldw, n0, n1, out, ldo);
    case DType::BF16:
      return gemv_dot_dtype<DType::BF16>(m, k, x, ldx, w, ldw, n0, n1, out, ldo);
    default:
      return gemv_dot_dtype<DType::F16>(m, k, x, ldx, w, ldw, n0, n1, out, ldo);
  }
}

// ---- GEMV over packed panels --------------------------------------------------------------

// M rows of x against one panel [k][16] (gemm.h PanelWeight). Unrolled U times along k
// so every output vector has U independent sums: at m = 1 the two sums of a plain loop
// would wait on the FMA latency, not on the panel's sequential stream.
// acc[i] += x[i, p] * panel row p (16 floats), i < M.
template <int M>
INGOT_TARGET_AVX2 __attribute__((always_inline)) inline void panel_step(const float* panel,
                                                                        const float* x, int64_t ldx,
                                                                        int64_t p,
                                                                        __m256 (&acc)[M][2]) {
  const __m256 b0 = _mm256_load_ps(panel + p * kNr);
  const __m256 b1 = _mm256_load_ps(panel + p * kNr + 8);
  for (int i = 0; i < M; ++i) {
    const __m256 xv = _mm256_broadcast_ss(x + i * ldx + p);
    acc[i][0] = _mm256_fmadd_ps(xv, b0, acc[i][0]);
    acc[i][1] = _mm256_fmadd_ps(xv, b1, acc[i][1]);
  }
}

template <int M>
INGOT_TARGET_AVX2 void gemv_panel_t(int64_t k, const float* x, int64_t ldx, const float* panel,
                                    float* out) {
  constexpr int U = M == 1 ? 4 : M == 2 ? 2 : 1;
  __m256 acc[U][M][2];
  for (int u = 0; u < U; ++u)
    for (int i = 0; i < M; ++i) acc[u][i][0] = acc[u][i][1] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + U <= k; p += U)
    for (int u = 0; u < U; ++u) panel_step<M>(panel, x, ldx, p + u, acc[u]);
  for (; p < k; ++p) panel_step<M>(panel, x, ldx, p, acc[0]);
  for (int i = 0; i < M; ++i)
    for (int h = 0; h < 2; ++h) {
      __m256 s = acc[0][i][h];
      for (int u = 1; u < U; ++u) s = _mm256_add_ps(s, acc[u][i][h]);
      _mm256_storeu_ps(out + i * kNr + h * 8, s);
    }
}

// kPanelStreams panels of one row of x: 2 * kPanelStreams independent sums, enough to
// cover the FMA latency without unrolling.
INGOT_TARGET_AVX2 void gemv_panel_streams_avx2(int64_t k, const float* x,
                                               const float* const* panels, float* out) {
  constexpr int S = kPanelStreams;
  __m256 acc[S][2];
  for (int s = 0; s < S; ++s) acc[s][0] = acc[s][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const __m256 xv = _mm256_broadcast_ss(x + p);
    for (int s = 0; s < S; ++s) {
      acc[s][0] = _mm256_fmadd_ps(xv, _mm256_load_ps(panels[s] + p * kNr), acc[s][0]);
      acc[s][1] = _mm256_fmadd_ps(xv, _mm256_load_ps(panels[s] + p * kNr + 8), acc[s][1]);
    }
  }
  for (int s = 0; s < S; ++s) {
    _mm256_storeu_ps(out + s * kNr, acc[s][0]);
    _mm256_storeu_ps(out + s * kNr + 8, acc[s][1]);
  }
}

void gemv_panel_avx2(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel,
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

// Edge tiles of 1 .. kMr - 1 rows (a 16-row prefill is 6 + 6 + 4 rows, not 18).
constexpr MicroKernelFn kEdgeTiles[kMr - 1] = {micro_avx2<1, kNv, kMr>, micro_avx2<2, kNv, kMr>,
                                               micro_avx2<3, kNv, kMr>, micro_avx2<4, kNv, kMr>,
                                               micro_avx2<5, kNv, kMr>};

}  // namespace

const GemmKernels& avx2_kernels() {
  static const GemmKernels table{GemmIsa::Avx2,
                                 kMr,
                                 kNr,
                                 /*mc=*/kMr * 24,
                                 /*kc=*/256,
                                 /*nc=*/kNr * 256,
                                 micro_avx2<kMr, kNv>,
                                 pack_a_avx2,
                                 pack_b_avx2,
                                 gemv_dot_avx2,
                                 /*gemv_bf16=*/nullptr,
                                 /*gemm_bf16_dot=*/nullptr,
                                 gemv_panel_avx2,
                                 gemv_panel_streams_avx2,
                                 gemv_row_streams_avx2,
                                 kEdgeTiles};
  return table;
}

}  // namespace ingot::cpu::detail
