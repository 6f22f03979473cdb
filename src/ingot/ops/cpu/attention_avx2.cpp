// AVX2 + FMA block kernels of the fused attention, for CPUs without AVX-512 (AMD Zen 1-3,
// Intel client parts). Every function here carries the target attribute; the library
// baseline stays generic x86-64 and the driver calls in only after cpu_has_avx2().
// 16-bit K/V rows are widened to float in registers (vcvtph2ps for f16, a 16-bit shift
// for bf16), so K and V are read once, as stored. AVX2 has no masked 16-bit loads: a
// row tail shorter than 8 elements goes through a zero-filled 8-element copy, so no
// load reads past the row.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/attention_kernels.h"
#include "ingot/ops/cpu/avx2_math.h"

namespace ingot::cpu::attn {
namespace {

// The register tiles below are arrays indexed by small constant-trip loops; every such
// loop carries `#pragma GCC unroll` so that the arrays become registers (GCC 12 does not
// unroll an outer row loop around an unrolled inner one by itself, and then keeps the
// accumulators in memory: a store per FMA).

const uint16_t* bits(const Half* p) {
  return reinterpret_cast<const uint16_t*>(p);
}
const uint16_t* bits(const BFloat16* p) {
  return reinterpret_cast<const uint16_t*>(p);
}

// 8 consecutive elements as float.
INGOT_AVX2_MATH inline __m256 load8(const float* p) {
  return _mm256_loadu_ps(p);
}
INGOT_AVX2_MATH inline __m256 load8(const Half* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
INGOT_AVX2_MATH inline __m256 load8(const BFloat16* p) {
  return load_bf16x8(bits(p));
}

// The first n (0 < n < 8) elements as float, the other lanes 0.
INGOT_AVX2_MATH inline __m256 load8_tail(const float* p, int64_t n) {
  return _mm256_maskload_ps(p, tail_mask8(n));
}
INGOT_AVX2_MATH inline __m256 load8_tail(const Half* p, int64_t n) {
  return _mm256_cvtph_ps(load_u16_partial(bits(p), n));
}
INGOT_AVX2_MATH inline __m256 load8_tail(const BFloat16* p, int64_t n) {
  const __m128i h = load_u16_partial(bits(p), n);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// [hsum(a0), hsum(a1), hsum(a2), hsum(a3)]
INGOT_AVX2_MATH inline __m128 hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// sc[r, 0..J) = scale * dot(q[r, :], k[0..J, :]) for R query rows and J keys (J = 4 or
// 1): R*J partial sums of 8 lanes stay in registers (R = 2, J = 4: 8 of the 16), each
// K row is loaded once per tile and the J sums of a row are reduced together.
template <typename T, int R, int J>
INGOT_AVX2_MATH void scores_tile(const float* q, int64_t e, const T* k, int64_t ks, float scale,
                                 float* sc, int64_t ldsc) {
  __m256 acc[R][J];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int u = 0; u < J; ++u) acc[r][u] = _mm256_setzero_ps();
  }
  const int64_t e8 = e & ~int64_t(7);
  for (int64_t c = 0; c < e8; c += 8) {
    __m256 kv[J];
#pragma GCC unroll 8
    for (int u = 0; u < J; ++u) kv[u] = load8(k + u * ks + c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 qv = _mm256_loadu_ps(q + r * e + c);
#pragma GCC unroll 8
      for (int u = 0; u < J; ++u) acc[r][u] = _mm256_fmadd_ps(qv, kv[u], acc[r][u]);
    }
  }
  if (e8 < e) {  // zero-filled tails on both sides, so stale lanes cannot make 0 * inf
    __m256 kv[J];
#pragma GCC unroll 8
    for (int u = 0; u < J; ++u) kv[u] = load8_tail(k + u * ks + e8, e - e8);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 qv = load8_tail(q + r * e + e8, e - e8);
#pragma GCC unroll 8
      for (int u = 0; u < J; ++u) acc[r][u] = _mm256_fmadd_ps(qv, kv[u], acc[r][u]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if constexpr (J == 4) {
      const __m128 s = hsum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
      _mm_storeu_ps(sc + r * ldsc, _mm_mul_ps(s, _mm_set1_ps(scale)));
    } else {
      sc[r * ldsc] = hsum256(acc[r][0]) * scale;
    }
  }
}

// R query rows against the block's nk keys, four keys at a time.
template <typename T, int R>
INGOT_AVX2_MATH void scores_rows(const float* q, int64_t e, const T* k, int64_t ks, int64_t nk,
                                 float scale, float* sc, int64_t ldsc) {
  int64_t j = 0;
  for (; j + 4 <= nk; j += 4) scores_tile<T, R, 4>(q, e, k + j * ks, ks, scale, sc + j, ldsc);
  for (; j < nk; ++j) scores_tile<T, R, 1>(q, e, k + j * ks, ks, scale, sc + j, ldsc);
}

template <typename T>
INGOT_AVX2_MATH void scores_impl(const float* q, int64_t m, int64_t e, const T* k, int64_t ks,
                                 int64_t nk, float scale, float* sc, int64_t ldsc) {
  int64_t r = 0;
  for (; r + 2 <= m; r += 2) scores_rows<T, 2>(q + r * e, e, k, ks, nk, scale, sc + r * ldsc, ldsc);
  if (r < m) scores_rows<T, 1>(q + r * e, e, k, ks, nk, scale, sc + r * ldsc, ldsc);
}

// acc[r, 0..cols) += sum_j p[r, j] * v[j, 0..cols) for R rows over a strip of at most 32
// columns: R x 4 accumulators (8 of the 16 registers for R = 2) stay in registers while
// the block's value rows stream through, each V element loaded once per strip.
// kFull: cols == 32 (no masks); otherwise 0 < cols < 32, lanes past cols are computed
// on zeros and never stored.
template <typename T, int R, bool kFull>
INGOT_AVX2_MATH void accumulate_strip(const float* p, int64_t ldp, const T* v, int64_t vs,
                                      int64_t nk, int64_t cols, float* acc, int64_t lda) {
  __m256i mk[4];
#pragma GCC unroll 8
  for (int u = 0; u < 4; ++u) mk[u] = tail_mask8(cols - 8 * u);
  __m256 a[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int u = 0; u < 4; ++u) {
      if constexpr (kFull) {
        a[r][u] = _mm256_loadu_ps(acc + r * lda + 8 * u);
      } else {
        a[r][u] = _mm256_maskload_ps(acc + r * lda + 8 * u, mk[u]);
      }
    }
  }
  for (int64_t j = 0; j < nk; ++j) {
    const T* vr = v + j * vs;
    __m256 vv[4];
#pragma GCC unroll 8
    for (int u = 0; u < 4; ++u) {
      if constexpr (kFull) {
        vv[u] = load8(vr + 8 * u);
      } else {
        const int64_t left = cols - 8 * u;
        vv[u] = left >= 8  ? load8(vr + 8 * u)
                : left > 0 ? load8_tail(vr + 8 * u, left)
                           : _mm256_setzero_ps();
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 pb = _mm256_broadcast_ss(p + r * ldp + j);
#pragma GCC unroll 8
      for (int u = 0; u < 4; ++u) a[r][u] = _mm256_fmadd_ps(pb, vv[u], a[r][u]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int u = 0; u < 4; ++u) {
      if constexpr (kFull) {
        _mm256_storeu_ps(acc + r * lda + 8 * u, a[r][u]);
      } else {
        _mm256_maskstore_ps(acc + r * lda + 8 * u, mk[u], a[r][u]);
      }
    }
  }
}

template <typename T, int R>
INGOT_AVX2_MATH void accumulate_rows(const float* p, int64_t ldp, const T* v, int64_t vs,
                                     int64_t nk, int64_t ev, float* acc) {
  int64_t c = 0;
  for (; c + 32 <= ev; c += 32)
    accumulate_strip<T, R, true>(p, ldp, v + c, vs, nk, 32, acc + c, ev);
  if (c < ev) accumulate_strip<T, R, false>(p, ldp, v + c, vs, nk, ev - c, acc + c, ev);
}

template <typename T>
INGOT_AVX2_MATH void accumulate_impl(const float* p, int64_t ldp, int64_t m, const T* v, int64_t vs,
                                     int64_t nk, int64_t ev, float* acc) {
  int64_t r = 0;
  for (; r + 2 <= m; r += 2) accumulate_rows<T, 2>(p + r * ldp, ldp, v, vs, nk, ev, acc + r * ev);
  if (r < m) accumulate_rows<T, 1>(p + r * ldp, ldp, v, vs, nk, ev, acc + r * ev);
}

}  // namespace

bool cpu_has_avx2() {
  return cpu_features().avx2_kernels();
}

INGOT_AVX2_MATH void scores_avx2(const float* q, int64_t m, int64_t e, const float* k, int64_t ks,
                                 int64_t nk, float scale, float* sc, int64_t ldsc) {
  scores_impl(q, m, e, k, ks, nk, scale, sc, ldsc);
}
INGOT_AVX2_MATH void scores_avx2(const float* q, int64_t m, int64_t e, const Half* k, int64_t ks,
                                 int64_t nk, float scale, float* sc, int64_t ldsc) {
  scores_impl(q, m, e, k, ks, nk, scale, sc, ldsc);
}
INGOT_AVX2_MATH void scores_avx2(const float* q, int64_t m, int64_t e, const BFloat16* k,
                                 int64_t ks, int64_t nk, float scale, float* sc, int64_t ldsc) {
  scores_impl(q, m, e, k, ks, nk, scale, sc, ldsc);
}

INGOT_AVX2_MATH void softmax_step_avx2(float* sc, int64_t ldsc, int64_t m, int64_t nk,
                                       float* run_max, float* run_sum, float* alpha) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const __m256 neg_inf = _mm256_set1_ps(kNegInf);
  const int64_t nk8 = nk & ~int64_t(7);
  const __m256i tail = tail_mask8(nk - nk8);
  for (int64_t r = 0; r < m; ++r) {
    float* row = sc + r * ldsc;
    __m256 vmax = neg_inf;
    for (int64_t j = 0; j < nk8; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + j));
    if (nk8 < nk) {
      const __m256 t = _mm256_maskload_ps(row + nk8, tail);
      vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(neg_inf, t, _mm256_castsi256_ps(tail)));
    }
    const float m_new = std::max(run_max[r], hmax256(vmax));
    if (m_new == kNegInf) {  // nothing visible yet: weights 0, keep the (empty) state
      for (int64_t j = 0; j < nk; ++j) row[j] = 0.0f;
      alpha[r] = 1.0f;
      continue;
    }
    const __m256 mv = _mm256_set1_ps(m_new);
    __m256 vsum = _mm256_setzero_ps();
    for (int64_t j = 0; j < nk8; j += 8) {
      const __m256 pe = exp256(_mm256_sub_ps(_mm256_loadu_ps(row + j), mv));
      _mm256_storeu_ps(row + j, pe);
      vsum = _mm256_add_ps(vsum, pe);
    }
    if (nk8 < nk) {  // lanes past nk hold exp(0 - m_new): stored nowhere, summed as 0
      const __m256 pe = exp256(_mm256_sub_ps(_mm256_maskload_ps(row + nk8, tail), mv));
      _mm256_maskstore_ps(row + nk8, tail, pe);
      vsum = _mm256_add_ps(vsum, _mm256_and_ps(pe, _mm256_castsi256_ps(tail)));
    }
    alpha[r] = std::exp(run_max[r] - m_new);
    run_sum[r] = run_sum[r] * alpha[r] + hsum256(vsum);
    run_max[r] = m_new;
  }
}

INGOT_AVX2_MATH void accumulate_avx2(const float* p, int64_t ldp, int64_t m, const float* v,
                                     int64_t vs, int64_t nk, int64_t ev, float* acc) {
  accumulate_impl(p, ldp, m, v, vs, nk, ev, acc);
}
INGOT_AVX2_MATH void accumulate_avx2(const float* p, int64_t ldp, int64_t m, const Half* v,
                                     int64_t vs, int64_t nk, int64_t ev, float* acc) {
  accumulate_impl(p, ldp, m, v, vs, nk, ev, acc);
}
INGOT_AVX2_MATH void accumulate_avx2(const float* p, int64_t ldp, int64_t m, const BFloat16* v,
                                     int64_t vs, int64_t nk, int64_t ev, float* acc) {
  accumulate_impl(p, ldp, m, v, vs, nk, ev, acc);
}

}  // namespace ingot::cpu::attn
