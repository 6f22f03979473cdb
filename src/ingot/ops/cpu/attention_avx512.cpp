// AVX-512 block kernels of the fused attention. Every function here carries the
// target attribute; the library baseline stays generic x86-64 and the driver calls in
// only after cpu_has_avx512(). 16-bit K/V rows are widened to float in registers
// (vcvtph2ps for f16, a 16-bit shift for bf16), so K and V are read once, as stored.
// GCC 12's AVX-512 headers seed some intrinsics with a self-initialised "undefined"
// vector, which -Wmaybe-uninitialized reports at every use; the values are never read.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/attention_kernels.h"
#include "ingot/ops/cpu/avx512_math.h"

#define INGOT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))

namespace ingot::cpu::attn {
namespace {

INGOT_AVX512 inline __m512 load16(const float* p, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, p);
}
INGOT_AVX512 inline __m512 load16(const Half* p, __mmask16 m) {
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}
INGOT_AVX512 inline __m512 load16(const BFloat16* p, __mmask16 m) {
  return load_bf16x16(reinterpret_cast<const uint16_t*>(p), m);
}

// R query rows against every key of the block: each K row is loaded once per tile.
template <typename T, int R>
INGOT_AVX512 void scores_tile(const float* q, int64_t e, const T* k, int64_t ks, int64_t nk,
                              float scale, float* sc, int64_t ldsc) {
  for (int64_t j = 0; j < nk; ++j) {
    const T* kr = k + j * ks;
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t c = 0; c < e; c += 16) {
      const __mmask16 m = tail_mask16(e - c);
      const __m512 kv = load16(kr + c, m);
      for (int r = 0; r < R; ++r) {
        acc[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + r * e + c), kv, acc[r]);
      }
    }
    for (int r = 0; r < R; ++r) sc[r * ldsc + j] = _mm512_reduce_add_ps(acc[r]) * scale;
  }
}

template <typename T>
INGOT_AVX512 void scores_impl(const float* q, int64_t m, int64_t e, const T* k, int64_t ks,
                              int64_t nk, float scale, float* sc, int64_t ldsc) {
  int64_t r = 0;
  for (; r + 4 <= m; r += 4) scores_tile<T, 4>(q + r * e, e, k, ks, nk, scale, sc + r * ldsc, ldsc);
  switch (m - r) {
    case 3:
      scores_tile<T, 3>(q + r * e, e, k, ks, nk, scale, sc + r * ldsc, ldsc);
      break;
    case 2:
      scores_tile<T, 2>(q + r * e, e, k, ks, nk, scale, sc + r * ldsc, ldsc);
      break;
    case 1:
      scores_tile<T, 1>(q + r * e, e, k, ks, nk, scale, sc + r * ldsc, ldsc);
      break;
    default:
      break;
  }
}

// R accumulator rows x 64 output columns live in 4R registers while the block's value
// rows stream through.
template <typename T, int R>
INGOT_AVX512 void accumulate_tile(const float* p, int64_t ldp, const T* v, int64_t vs, int64_t nk,
                                  int64_t ev, float* acc) {
  for (int64_t c = 0; c < ev; c += 64) {
    __mmask16 mk[4];
    for (int u = 0; u < 4; ++u) {
      const int64_t left = ev - c - 16 * u;
      mk[u] = left > 0 ? tail_mask16(left) : __mmask16(0);
    }
    __m512 a[R][4];
    for (int r = 0; r < R; ++r) {
      for (int u = 0; u < 4; ++u) a[r][u] = _mm512_maskz_loadu_ps(mk[u], acc + r * ev + c + 16 * u);
    }
    for (int64_t j = 0; j < nk; ++j) {
      const T* vr = v + j * vs + c;
      __m512 vv[4];
      for (int u = 0; u < 4; ++u) vv[u] = load16(vr + 16 * u, mk[u]);
      for (int r = 0; r < R; ++r) {
        const __m512 pb = _mm512_set1_ps(p[r * ldp + j]);
        for (int u = 0; u < 4; ++u) a[r][u] = _mm512_fmadd_ps(pb, vv[u], a[r][u]);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int u = 0; u < 4; ++u) _mm512_mask_storeu_ps(acc + r * ev + c + 16 * u, mk[u], a[r][u]);
    }
  }
}

template <typename T>
INGOT_AVX512 void accumulate_impl(const float* p, int64_t ldp, int64_t m, const T* v, int64_t vs,
                                  int64_t nk, int64_t ev, float* acc) {
  int64_t r = 0;
  for (; r + 4 <= m; r += 4) accumulate_tile<T, 4>(p + r * ldp, ldp, v, vs, nk, ev, acc + r * ev);
  switch (m - r) {
    case 3:
      accumulate_tile<T, 3>(p + r * ldp, ldp, v, vs, nk, ev, acc + r * ev);
      break;
    case 2:
      accumulate_tile<T, 2>(p + r * ldp, ldp, v, vs, nk, ev, acc + r * ev);
      break;
    case 1:
      accumulate_tile<T, 1>(p + r * ldp, ldp, v, vs, nk, ev, acc + r * ev);
      break;
    default:
      break;
  }
}

}  // namespace

bool cpu_has_avx512() {
  return cpu_features().avx512_kernels();
}

INGOT_AVX512 void scores_avx512(const float* q, int64_t m, int64_t e, const float* k, int64_t ks,
                                int64_t nk, float scale, float* sc, int64_t ldsc) {
  scores_impl(q, m, e, k, ks, nk, scale, sc, ldsc);
}
INGOT_AVX512 void scores_avx512(const float* q, int64_t m, int64_t e, const Half* k, int64_t ks,
                                int64_t nk, float scale, float* sc, int64_t ldsc) {
  scores_impl(q, m, e, k, ks, nk, scale, sc, ldsc);
}
INGOT_AVX512 void scores_avx512(const float* q, int64_t m, int64_t e, const BFloat16* k, int64_t ks,
                                int64_t nk, float scale, float* sc, int64_t ldsc) {
  scores_impl(q, m, e, k, ks, nk, scale, sc, ldsc);
}

INGOT_AVX512 void softmax_step_avx512(float* sc, int64_t ldsc, int64_t m, int64_t nk,
                                      float* run_max, float* run_sum, float* alpha) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const __m512 neg_inf = _mm512_set1_ps(kNegInf);
  for (int64_t r = 0; r < m; ++r) {
    float* row = sc + r * ldsc;
    __m512 vmax = neg_inf;
    for (int64_t j = 0; j < nk; j += 16) {
      vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(neg_inf, tail_mask16(nk - j), row + j));
    }
    const float m_new = std::max(run_max[r], _mm512_reduce_max_ps(vmax));
    if (m_new == kNegInf) {  // nothing visible yet: weights 0, keep the (empty) state
      for (int64_t j = 0; j < nk; ++j) row[j] = 0.0f;
      alpha[r] = 1.0f;
      continue;
    }
    const __m512 mv = _mm512_set1_ps(m_new);
    __m512 vsum = _mm512_setzero_ps();
    for (int64_t j = 0; j < nk; j += 16) {
      const __mmask16 mk = tail_mask16(nk - j);
      const __m512 pe = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, row + j), mv));
      _mm512_mask_storeu_ps(row + j, mk, pe);
      vsum = _mm512_mask_add_ps(vsum, mk, vsum, pe);
    }
    alpha[r] = std::exp(run_max[r] - m_new);
    run_sum[r] = run_sum[r] * alpha[r] + _mm512_reduce_add_ps(vsum);
    run_max[r] = m_new;
  }
}

INGOT_AVX512 void accumulate_avx512(const float* p, int64_t ldp, int64_t m, const float* v,
                                    int64_t vs, int64_t nk, int64_t ev, float* acc) {
  accumulate_impl(p, ldp, m, v, vs, nk, ev, acc);
}
INGOT_AVX512 void accumulate_avx512(const float* p, int64_t ldp, int64_t m, const Half* v,
                                    int64_t vs, int64_t nk, int64_t ev, float* acc) {
  accumulate_impl(p, ldp, m, v, vs, nk, ev, acc);
}
INGOT_AVX512 void accumulate_avx512(const float* p, int64_t ldp, int64_t m, const BFloat16* v,
                                    int64_t vs, int64_t nk, int64_t ev, float* acc) {
  accumulate_impl(p, ldp, m, v, vs, nk, ev, acc);
}

}  // namespace ingot::cpu::attn
