// Generic packers: copy a block of a strided f32/bf16/f16 matrix into the k-major f32
// panels the micro-kernels read (layout in gemm_internal.h). They handle any strides,
// including 0 and negative ones, and zero-fill the panel padding.
#include <algorithm>

#include "ingot/ops/cpu/gemm_internal.h"

namespace ingot::cpu::detail {
namespace {

// Element reader specialised per storage dtype so the inner loops stay branch-free.
template <DType D>
struct Reader;
template <>
struct Reader<DType::F32> {
  static float at(const void* p, int64_t i) { return static_cast<const float*>(p)[i]; }
};
template <>
struct Reader<DType::BF16> {
  static float at(const void* p, int64_t i) {
    return bf16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
  }
};
template <>
struct Reader<DType::F16> {
  static float at(const void* p, int64_t i) {
    return Half::to_float(static_cast<const uint16_t*>(p)[i]);
  }
};

// Packs `rows` x `cols` of a strided source into panels of width `w` along `rows`:
// panel p, element (c, j) = src(p*w + j, c) at out[p*cols*w + c*w + j]. Used for A
// (rows = m, cols = k) and, with the roles of the strides swapped, for B (rows = n,
// cols = k).
template <DType D>
void pack_panels(const void* base, int64_t stride_r, int64_t stride_c, int64_t rows, int64_t cols,
                 int w, float* out) {
  using R = Reader<D>;
  for (int64_t p0 = 0; p0 < rows; p0 += w) {
    const int64_t valid = std::min<int64_t>(w, rows - p0);
    float* panel = out + (p0 / w) * cols * w;
    if (stride_r == 1) {
      // The panel's w elements are contiguous in the source: copy row by row of k.
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t off = p0 + c * stride_c;
        float* dst = panel + c * w;
        for (int64_t j = 0; j < valid; ++j) dst[j] = R::at(base, off + j);
        for (int64_t j = valid; j < w; ++j) dst[j] = 0.0f;
      }
    } else {
      // Walk each source line along c (contiguous when stride_c == 1).
      for (int64_t j = 0; j < valid; ++j) {
        const int64_t off = (p0 + j) * stride_r;
        for (int64_t c = 0; c < cols; ++c) panel[c * w + j] = R::at(base, off + c * stride_c);
      }
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t j = valid; j < w; ++j) panel[c * w + j] = 0.0f;
    }
  }
}

void pack_dispatch(DType dt, const void* base, int64_t stride_r, int64_t stride_c, int64_t rows,
                   int64_t cols, int w, float* out) {
  switch (dt) {
    case DType::F32:
      return pack_panels<DType::F32>(base, stride_r, stride_c, rows, cols, w, out);
    case DType::BF16:
      return pack_panels<DType::BF16>(base, stride_r, stride_c, rows, cols, w, out);
    default:
      return pack_panels<DType::F16>(base, stride_r, stride_c, rows, cols, w, out);
  }
}

}  // namespace

void pack_a_generic(const MatrixView& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, int mr,
                    float* out) {
  const void* base = elem_ptr(a.data, a.dtype, m0 * a.stride_row + k0 * a.stride_col);
  pack_dispatch(a.dtype, base, a.stride_row, a.stride_col, mc, kc, mr, out);
}

void pack_b_generic(const MatrixView& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, int nr,
                    float* out) {
  // B's panels run along n (its columns): "rows" of pack_panels are B's columns.
  const void* base = elem_ptr(b.data, b.dtype, k0 * b.stride_row + n0 * b.stride_col);
  pack_dispatch(b.dtype, base, b.stride_col, b.stride_row, nc, kc, nr, out);
}

}  // namespace ingot::cpu::detail
