// Dense matrix multiply on the CPU: the one entry point every matmul-like op calls.
//
//   C[m, n] = alpha * sum_k A[m, k] * B[k, n] + beta * C[m, n]
//
// A and B are strided views (data pointer, dtype, row stride, column stride, in
// elements), so a transposed operand is the same memory with swapped strides. The
// LLM case `linear`, y[M, N] = x[M, K] · W[N, K]^T with W row-major, is B with
// stride_row = 1 (along k) and stride_col = K (along n).
//
// Invariants:
//  - Products are accumulated in f32 whatever the input dtypes (f32, bf16, f16); 16-bit
//    operands are converted block by block while packing, never as a whole copy.
//  - C is f32, bf16 or f16, rows `ldc` elements apart, columns contiguous. A 16-bit C
//    is rounded once, after the full sum over k.
//  - beta == 0 means C is write-only: NaN/garbage already in C never reaches the result.
//  - Any of m, n, k may be 0 (k == 0 gives C = beta * C).
//  - C must not alias A or B.
//
// Small m (GEMV, decode) streams the weight rows with several accumulators; larger m
// goes through a packed, register-blocked kernel. Both run on ingot's thread pool and
// pick AVX-512, AVX2 or scalar code at run time.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ingot/core/dtype.h"

namespace ingot::cpu {

// A read-only strided matrix: element (r, c) lives at data + r * stride_row + c * stride_col
// (element units of `dtype`).
struct MatrixView {
  const void* data = nullptr;
  DType dtype = DType::F32;
  int64_t stride_row = 0;
  int64_t stride_col = 1;
};

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  MatrixView a;       // [m, k]
  MatrixView b;       // [k, n]
  void* c = nullptr;  // [m, n], row stride ldc, unit column stride
  DType c_dtype = DType::F32;
  int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
};

// Computes C = alpha * A·B + beta * C. Throws DTypeError for unsupported dtypes and
// ValueError for negative sizes or a too-small ldc; messages start with "[gemm]".
void gemm(const GemmArgs& args);

// Several products with the same A (the q / k / v projections of one input, gate and up):
// each C_j equal to gemm(products[j])'s, bit for bit. Where gemm streams the weights (B in
// the linear layout, up to 16 rows of A) or runs the bf16 tile GEMM (bf16 A and B, more
// than 4 rows), the columns of all products are one range the thread pool splits once
// (one fork / join; A converted once); otherwise the products run one after the other.
// ValueError for an empty list.
void gemm_siblings(std::span<const GemmArgs> products);

// ---- weights packed once -------------------------------------------------------------
//
// A `linear` weight W [n, k] (f32, rows contiguous) rearranged once into the B panels
// the blocked kernels read, so a product with it packs nothing per call: ceil(n / width)
// panels, panel q holding W rows [q * width, q * width + width) k-major,
//   data[(q * k + p) * width + r] = W[q * width + r, p]   (zero for rows past n).
// For the runtime's f32 linears (runtime/passes/packed_linear_weights.h): packing W [3072,
// 1024] took 15% of a 128-row prefill product, and a decode GEMV reads each panel as one
// sequential stream.
struct PanelWeight {
  const float* data = nullptr;  // 64-byte aligned
  int64_t n = 0, k = 0;
  int64_t width = 0;
};

// The panel width the active kernels read without conversion; 0 when they have no fast
// path for packed weights (then packing is not worth it; gemm_panels still works).
int64_t gemm_panel_width();
// Packs W (row stride ldw) into `out` (ceil(n / width) * k * width floats, 64-byte
// aligned).
void pack_weight_panels(const float* w, int64_t ldw, int64_t n, int64_t k, int64_t width,
                        float* out);
// y[m, n] = x[m, k] · W^T + beta * y: x and y f32, rows ldx / ldy apart; beta 0 or 1
// (1: y holds the bias). Any width; the active kernels' width takes the fast path.
void gemm_panels(int64_t m, const float* x, int64_t ldx, const PanelWeight& w, float* y,
                 int64_t ldy, float beta);

// Instruction-set levels of the kernels. The active level is the best the CPU supports
// unless lowered with set_gemm_isa (tests use it to cover every code path) or the
// environment variable INGOT_GEMM_ISA=scalar|avx2|avx512.
enum class GemmIsa { Scalar, Avx2, Avx512 };

GemmIsa gemm_isa();
GemmIsa best_supported_gemm_isa();
// Selects `isa`, clamped to what the CPU supports; returns the level now active.
GemmIsa set_gemm_isa(GemmIsa isa);
std::string_view gemm_isa_name(GemmIsa isa);

}  // namespace ingot::cpu
