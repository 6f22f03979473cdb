// Portable kernels: the fallback on CPUs without AVX2 and the reference the vectorised
// tables are tested against (set_gemm_isa(GemmIsa::Scalar)).
#include <algorithm>

#include "ingot/ops/cpu/gemm_internal.h"

namespace ingot::cpu::detail {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

// C[4, 8] tile; see MicroKernelFn.
void micro_scalar(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, float alpha,
                  float beta) {
  float acc[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* a = ap + p * kMr;
    const float* b = bp + p * kNr;
    for (int i = 0; i < kMr; ++i)
      for (int j = 0; j < kNr; ++j) acc[i][j] += a[i] * b[j];
  }
  for (int i = 0; i < kMr; ++i) {
    float* crow = c + i * ldc;
    for (int j = 0; j < kNr; ++j)
      crow[j] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * crow[j];
  }
}

}  // namespace

void gemv_dot_scalar(int64_t m, int64_t k, const float* x, int64_t ldx, const void* w,
                     DType w_dtype, int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo) {
  for (int64_t n = n0; n < n1; ++n) {
    const void* row = elem_ptr(w, w_dtype, n * ldw);
    for (int64_t i = 0; i < m; ++i) {
      const float* xi = x + i * ldx;
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += xi[p] * load_as_float(row, w_dtype, p);
      out[i * ldo + (n - n0)] = s;
    }
  }
}

const GemmKernels& scalar_kernels() {
  static const GemmKernels table{
      GemmIsa::Scalar, kMr, kNr, 128, 256, 1024, micro_scalar, pack_a_generic, pack_b_generic,
      gemv_dot_scalar};
  return table;
}

}  // namespace ingot::cpu::detail
