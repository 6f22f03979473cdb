// Portable row kernel of quantized_matmul: the reference the AVX-512 path is tested on.
#include "ingot/ops/cpu/quantized_gemv_internal.h"

namespace ingot::cpu::detail {

namespace {
// Weight c of packed row `row` (0 .. 2^bits - 1).
inline int packed_value(const uint8_t* row, int bits, int64_t c) {
  if (bits == 8) return row[c];
  const uint8_t b = row[c / 2];
  return (c & 1) ? (b >> 4) : (b & 0x0F);
}
}  // namespace

void quantized_gemv_rows_scalar(const float* x, const PackedWeight& w, int64_t r0, int64_t r1,
                                float* y) {
  const int64_t ng = w.groups();
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.q + r * w.row_bytes();
    float acc = 0.0f;
    for (int64_t g = 0; g < ng; ++g) {
      const int z = w.zero(r, g);
      float part = 0.0f;
      for (int64_t c = g * w.group; c < (g + 1) * w.group; ++c)
        part += float(packed_value(row, w.bits, c) - z) * x[c];
      acc += part * w.scales[r * ng + g];
    }
    y[r] = acc;
  }
}

void dequantize_rows_scalar(const PackedWeight& w, int64_t r0, int64_t r1, float* out) {
  const int64_t ng = w.groups();
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.q + r * w.row_bytes();
    float* o = out + (r - r0) * w.k;
    for (int64_t c = 0; c < w.k; ++c) {
      const int64_t g = c / w.group;
      o[c] = float(packed_value(row, w.bits, c) - w.zero(r, g)) * w.scales[r * ng + g];
    }
  }
}

}  // namespace ingot::cpu::detail
