// Block kernels of the fused attention (cpu/attention.cpp), AVX-512 and AVX2 versions.
//
// Defined in attention_avx512.cpp / attention_avx2.cpp with target attributes; call them
// only when cpu_has_avx512() / cpu_has_avx2() is true. Both sets compute the same thing
// (up to summation order) under the contracts below. Q tiles, scores and accumulators are float,
// row-major:
//   q   [M, E]          (row stride E)
//   k   [nk, E]         rows `ks` elements apart, unit element stride
//   sc  [M, ldsc]       scores, overwritten by the softmax weights p
//   v   [nk, Ev]        rows `vs` elements apart, unit element stride
//   acc [M, Ev]         (row stride Ev)
#pragma once

#include <cstdint>

#include "ingot/core/half.h"

namespace ingot::cpu::attn {

// True when the CPU supports the AVX-512 subset these kernels use.
bool cpu_has_avx512();

// sc[r, j] = scale * dot(q[r, :], k[j, :])
void scores_avx512(const float* q, int64_t m, int64_t e, const float* k, int64_t ks, int64_t nk,
                   float scale, float* sc, int64_t ldsc);
void scores_avx512(const float* q, int64_t m, int64_t e, const Half* k, int64_t ks, int64_t nk,
                   float scale, float* sc, int64_t ldsc);
void scores_avx512(const float* q, int64_t m, int64_t e, const BFloat16* k, int64_t ks, int64_t nk,
                   float scale, float* sc, int64_t ldsc);

// Online-softmax step for each row r < m over the block's nk scores:
//   m_new = max(run_max[r], max_j sc[r, j]); sc[r, j] = exp(sc[r, j] - m_new);
//   alpha[r] = exp(run_max[r] - m_new); run_sum[r] = run_sum[r] * alpha[r] + sum_j sc[r, j].
// A row still entirely at -inf gets p = 0 and alpha = 1.
void softmax_step_avx512(float* sc, int64_t ldsc, int64_t m, int64_t nk, float* run_max,
                         float* run_sum, float* alpha);

// acc[r, :] += sum_j p[r, j] * v[j, :]
void accumulate_avx512(const float* p, int64_t ldp, int64_t m, const float* v, int64_t vs,
                       int64_t nk, int64_t ev, float* acc);
void accumulate_avx512(const float* p, int64_t ldp, int64_t m, const Half* v, int64_t vs,
                       int64_t nk, int64_t ev, float* acc);
void accumulate_avx512(const float* p, int64_t ldp, int64_t m, const BFloat16* v, int64_t vs,
                       int64_t nk, int64_t ev, float* acc);

// True when the CPU supports AVX2 + FMA + F16C, what the *_avx2 kernels use.
bool cpu_has_avx2();

void scores_avx2(const float* q, int64_t m, int64_t e, const float* k, int64_t ks, int64_t nk,
                 float scale, float* sc, int64_t ldsc);
void scores_avx2(const float* q, int64_t m, int64_t e, const Half* k, int64_t ks, int64_t nk,
                 float scale, float* sc, int64_t ldsc);
void scores_avx2(const float* q, int64_t m, int64_t e, const BFloat16* k, int64_t ks, int64_t nk,
                 float scale, float* sc, int64_t ldsc);
void softmax_step_avx2(float* sc, int64_t ldsc, int64_t m, int64_t nk, float* run_max,
                       float* run_sum, float* alpha);
void accumulate_avx2(const float* p, int64_t ldp, int64_t m, const float* v, int64_t vs, int64_t nk,
                     int64_t ev, float* acc);
void accumulate_avx2(const float* p, int64_t ldp, int64_t m, const Half* v, int64_t vs, int64_t nk,
                     int64_t ev, float* acc);
void accumulate_avx2(const float* p, int64_t ldp, int64_t m, const BFloat16* v, int64_t vs,
                     int64_t nk, int64_t ev, float* acc);

}  // namespace ingot::cpu::attn
