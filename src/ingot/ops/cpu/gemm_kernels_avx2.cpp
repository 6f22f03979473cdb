// AVX2 + FMA kernels: a 6x16 f32 micro-kernel and the GEMV row streamer. Packing uses the
// generic packers. Every function carries INGOT_TARGET_AVX2 and is only reached after
// the run-time CPU check in gemm.cpp.
#include <immintrin.h>

#include "ingot/ops/cpu/gemm_internal.h"

namespace ingot::cpu::detail {
namespace {

constexpr int kMr = 6;
constexpr int kNv = 2;
constexpr int kNr = 8 * kNv;

// C[MR, 8*NV] tile; see MicroKernelFn.
template <int MR, int NV>
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
    ap += MR;
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

INGOT_TARGET_AVX2 inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

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
      float s = hsum8(acc[i][r]);
      for (int64_t q = p; q < k; ++q) s += x[i * ldx + q] * load_as_float(w, dt, (n + r) * ldw + q);
      out[i * ldo + j + r] = s;
    }
}

template <DType D, int M>
INGOT_TARGET_AVX2 void gemv_dot_t(int64_t k, const float* x, int64_t ldx, const void* w,
                                  int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  constexpr int R = 4;
  int64_t n = n0;
  for (; n + R <= n1; n += R) gemv_rows_block<D, M, R>(k, x, ldx, w, ldw, n, out, ldo, n - n0, D);
  for (; n < n1; ++n) gemv_rows_block<D, M, 1>(k, x, ldx, w, ldw, n, out, ldo, n - n0, D);
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

}  // namespace

const GemmKernels& avx2_kernels() {
  static const GemmKernels table{GemmIsa::Avx2,
                                 kMr,
                                 kNr,
                                 /*mc=*/kMr * 24,
                                 /*kc=*/256,
                                 /*nc=*/kNr * 256,
                                 micro_avx2<kMr, kNv>,
                                 pack_a_generic,
                                 pack_b_generic,
                                 gemv_dot_avx2};
  return table;
}

}  // namespace ingot::cpu::detail
