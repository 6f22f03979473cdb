// Internals shared by the GEMM/GEMV translation units: the per-ISA kernel table, the
// packed-panel layout and the element conversions. Not part of the public API.
//
// Packed layout (all f32, 64-byte aligned):
//  - an A block [mc, kc] is ceil(mc / mr) panels; panel p holds rows [p*mr, p*mr + mr)
//    as [kc][mr] (k-major), rows past mc are zero.
//  - a B block [kc, nc] is ceil(nc / nr) panels; panel q holds columns [q*nr, q*nr + nr)
//    as [kc][nr] (k-major), columns past nc are zero.
// The micro-kernel multiplies one A panel by one B panel into an [mr, nr] tile of C.
#pragma once

#include <cstdint>
#include <cstring>

#include "ingot/core/half.h"
#include "ingot/ops/cpu/gemm.h"

#define INGOT_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma,f16c")))
#define INGOT_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace ingot::cpu::detail {

// C[mr, nr] (row stride ldc) = alpha * Apanel·Bpanel + beta * C over kc steps;
// beta == 0 does not read C.
using MicroKernelFn = void (*)(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                               float alpha, float beta);

// Packs A[m0 : m0+mc, k0 : k0+kc] into panels of `mr` rows (layout above).
using PackAFn = void (*)(const MatrixView& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc,
                         int mr, float* out);
// Packs B[k0 : k0+kc, n0 : n0+nc] into panels of `nr` columns (layout above).
using PackBFn = void (*)(const MatrixView& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                         int nr, float* out);

// Small-m product for weights stored along k (B stride_row == 1, the `linear` layout):
// out[i, j] = sum_k x[i, k] * W[n0 + j, k] for i < m, j < n1 - n0, where W row j starts
// at w + j * ldw (elements of w_dtype) and x is f32 [m, k] with row stride ldx.
// m <= kGemvMaxM.
using GemvDotFn = void (*)(int64_t m, int64_t k, const float* x, int64_t ldx, const void* w,
                           DType w_dtype, int64_t ldw, int64_t n0, int64_t n1, float* out,
                           int64_t ldo);

// GemvDotFn for bf16 weights with x given as two bf16 arrays, x ≈ xh + xl (rows ldx
// apart, zero-padded to a multiple of kGemvBf16Pad), for dot-product instructions.
// xl == nullptr when x is exactly bf16 (the low half would be zero).
using GemvBf16Fn = void (*)(int64_t m, int64_t k, const uint16_t* xh, const uint16_t* xl,
                            int64_t ldx, const uint16_t* w, int64_t ldw, int64_t n0, int64_t n1,
                            float* out, int64_t ldo);

// bf16 x bf16 product in the linear layout, both operands contiguous along k:
// out[i, j - n0] = sum_p a[i * lda + p] * w[j * ldw + p] for i < m, n0 <= j < n1, f32 out
// with row stride ldo (gemm_bf16_avx512.cpp). Any m; the prefill route of bf16 models.
using GemmBf16DotFn = void (*)(int64_t m, int64_t k, const uint16_t* a, int64_t lda,
                               const uint16_t* w, int64_t ldw, int64_t n0, int64_t n1, float* out,
                               int64_t ldo);

// Small m against one packed panel (gemm.h PanelWeight) of nr weight rows:
// out[i * nr + r] = sum_p x[i * ldx + p] * panel[p * nr + r] for i < m <= kGemvMaxM.
using GemvPanelFn = void (*)(int64_t m, int64_t k, const float* x, int64_t ldx, const float* panel,
                             float* out);

// m = 1 against kPanelStreams panels at once, each in its own region of memory:
// out[s * nr + r] = sum_p x[p] * panels[s][p * nr + r]. A decode GEMV reads its weights
// as several streams per thread this way; the read probe gets 15-40% more bandwidth from
// four streams per thread than from one (docs/runtime.md).
using GemvPanelStreamsFn = void (*)(int64_t k, const float* x, const float* const* panels,
                                    float* out);
inline constexpr int kPanelStreams = 4;

// The same for weights in the linear layout: out[s] = sum_p x[p] * W[rows[s], p] for
// kPanelStreams rows far apart, W rows ldw elements of w_dtype apart.
using GemvRowStreamsFn = void (*)(int64_t k, const float* x, const void* w, DType w_dtype,
                                  int64_t ldw, const int64_t* rows, float* out);

inline constexpr int64_t kGemvMaxM = 4;
inline constexpr int64_t kGemvBf16Pad = 32;

struct GemmKernels {
  GemmIsa isa;
  int mr, nr;          // micro-tile
  int64_t mc, kc, nc;  // cache blocks (mc % mr == 0, nc % nr == 0)
  MicroKernelFn micro;
  PackAFn pack_a;
  PackBFn pack_b;
  GemvDotFn gemv_dot;
  GemvBf16Fn gemv_bf16 = nullptr;         // optional (CPUs with AVX512_BF16)
  GemmBf16DotFn gemm_bf16_dot = nullptr;  // optional (CPUs with AVX512_BF16)
  GemvPanelFn gemv_panel = nullptr;       // optional: packed weights' decode path
  GemvPanelStreamsFn gemv_panel_streams = nullptr;  // with gemv_panel
  GemvRowStreamsFn gemv_row_streams = nullptr;      // optional: m = 1 in gemv_linear
  // Optional: edge_tiles[r - 1] computes an r-row tile (r < mr) from a full-height A
  // panel, so rows past m are not computed (else the micro-kernel runs into a buffer).
  const MicroKernelFn* edge_tiles = nullptr;
};

const GemmKernels& scalar_kernels();
const GemmKernels& avx2_kernels();
const GemmKernels& avx512_kernels();

// Generic (any stride, any dtype) packers, used directly by the scalar table and as the
// fallback of the vectorised ones.
void pack_a_generic(const MatrixView& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, int mr,
                    float* out);
void pack_b_generic(const MatrixView& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                    float* out);

void gemm_bf16_dot_avx512(int64_t m, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* w,
                          int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo);

// Scalar reference of GemvDotFn (any w dtype).
void gemv_dot_scalar(int64_t m, int64_t k, const float* x, int64_t ldx, const void* w,
                     DType w_dtype, int64_t ldw, int64_t n0, int64_t n1, float* out, int64_t ldo);

// ---- element conversion -------------------------------------------------------------

inline float bf16_bits_to_float(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Reads element i of a float/bf16/f16 array as f32.
inline float load_as_float(const void* p, DType dt, int64_t i) {
  switch (dt) {
    case DType::F32:
      return static_cast<const float*>(p)[i];
    case DType::BF16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
    default:  // F16 (validated by gemm())
      return Half::to_float(static_cast<const uint16_t*>(p)[i]);
  }
}

// Writes f32 v as element i of a float/bf16/f16 array (round to nearest even).
inline void store_from_float(void* p, DType dt, int64_t i, float v) {
  switch (dt) {
    case DType::F32:
      static_cast<float*>(p)[i] = v;
      return;
    case DType::BF16:
      static_cast<uint16_t*>(p)[i] = BFloat16::round_from_float(v);
      return;
    default:
      static_cast<uint16_t*>(p)[i] = Half::from_float(v);
      return;
  }
}

inline const char* elem_ptr(const void* base, DType dt, int64_t offset) {
  return static_cast<const char*>(base) + offset * int64_t(dt == DType::F32 ? 4 : 2);
}

}  // namespace ingot::cpu::detail
