// Int8 activations for quantized_matmul (QuantActivations::Int8): the activation
// quantiser, the VNNI kernels' lane layout, and the portable row kernel, the reference
// the VNNI kernel is tested against (quantized_gemv_internal.h defines the layout).
#include <algorithm>
#include <cmath>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/quantized_gemv_internal.h"

namespace ingot::cpu::detail {

namespace {

constexpr int64_t kBlock = 32;  // activation elements per scale

}  // namespace

// Round to nearest even, as the vector conversions do.
void quantize_row_scalar(const float* x, int64_t k, int8_t* q, float* scales) {
  for (int64_t b = 0, c0 = 0; c0 < k; ++b, c0 += kBlock) {
    const int64_t c1 = std::min(k, c0 + kBlock);
    float amax = 0.0f;
    for (int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x[c]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int64_t c = c0; c < c1; ++c) {
      const float v = std::nearbyint(x[c] * id);
      q[c] = int8_t(std::clamp(v, -127.0f, 127.0f));
    }
    scales[b] = d;
  }
}

namespace {

// The lane-layout arrays of row i (quantized_gemv_internal.h).
void lane_layout_row(Int8Activations& a, int64_t i) {
  const int8_t* q = a.q.data() + i * a.k;
  const float* xs = a.block_scales.data() + i * a.blocks;
  int8_t* p = a.packed.data() + i * a.kp;
  float* ls = a.lane_scales.data() + i * a.lanes;
  int32_t* sums = a.lane_sums.data() + i * a.lanes;
  int32_t* init = a.lane_init.data() + i * a.lanes;
  const auto at = [&](int64_t c) -> int8_t { return c < a.k ? q[c] : int8_t(0); };
  const int per_lane = a.bits == 8 ? 4 : 8;
  if (a.bits == 8) {
    for (int64_t c = 0; c < a.kp; ++c) p[c] = at(c);
  } else {
    for (int64_t c0 = 0; c0 < a.kp; c0 += 128)
      for (int64_t j = 0; j < 64; ++j) {
        p[c0 + j] = at(c0 + 2 * j);
        p[c0 + 64 + j] = at(c0 + 2 * j + 1);
      }
  }
  const int32_t zero = 1 << (a.bits - 1);
  for (int64_t l = 0; l < a.lanes; ++l) {
    const int64_t first = l * per_lane;  // the lane's first element (plain order)
    int32_t s = 0;
    for (int e = 0; e < per_lane; ++e) s += at(first + e);
    sums[l] = s;
    init[l] = -zero * s;
    ls[l] = first < a.k ? xs[first / kBlock] : 0.0f;
  }
  if (a.bits == 4) {
    int32_t* block_init = a.block_init.data() + i * a.lanes;
    for (int64_t l0 = 0; l0 < a.lanes; l0 += 4) {  // lanes is a multiple of 16
      const int32_t s = init[l0] + init[l0 + 1] + init[l0 + 2] + init[l0 + 3];
      std::fill(block_init + l0, block_init + l0 + 4, s);
    }
  }
}

}  // namespace

bool int8_activation_layout(const PackedWeight& w) {
  // 8-bit: per channel, or groups of whole 32-blocks (a GGUF's Q8_0 is groups of 32).
  if (w.bits == 8) return w.zeros == nullptr && (w.group == w.k || w.group % 32 == 0);
  return w.group == 32 || w.group == 64 || w.group % 128 == 0;
}

void quantize_activations(const float* x, int64_t ldx, int64_t m, int64_t k, int bits,
                          bool lane_layout, Int8Activations& a) {
  a.bits = bits;
  a.m = m;
  a.k = k;
  a.blocks = (k + kBlock - 1) / kBlock;
  const int64_t chunk = bits == 8 ? 64 : 128;
  a.kp = (k + chunk - 1) / chunk * chunk;
  a.lanes = a.kp / (bits == 8 ? 4 : 8);
  a.q.resize(size_t(m * k));
  a.block_scales.resize(size_t(m * a.blocks));
  if (lane_layout) {
    a.packed.resize(size_t(m * a.kp));
    a.lane_scales.resize(size_t(m * a.lanes));
    a.lane_sums.resize(size_t(m * a.lanes));
    a.lane_init.resize(size_t(m * a.lanes));
    a.block_init.resize(bits == 4 ? size_t(m * a.lanes) : 0);
  }
  // The lane layout is only asked for by the AVX2 / AVX-512 kernels; the scalar reference
  // path keeps the scalar quantiser.
  static const bool avx2 = cpu_features().avx2_kernels();
  const auto quantize_row = lane_layout && avx2 ? quantize_row_avx2 : quantize_row_scalar;
  for (int64_t i = 0; i < m; ++i) {
    quantize_row(x + i * ldx, k, a.q.data() + i * k, a.block_scales.data() + i * a.blocks);
    if (lane_layout) lane_layout_row(a, i);
  }
}

// Per block, sum w * q_x - z * sum q_x (the same exact integer as sum (w - z) * q_x), in
// loops over bytes the compiler vectorises (4-bit: both nibbles of a byte per step; for
// bits 4 the blocks are whole, k being a multiple of G and G of 32).
void int8act_rows_scalar(const Int8Activations& a, int64_t i, const PackedWeight& w, int64_t r0,
                         int64_t r1, float* y) {
  const int8_t* q = a.q.data() + i * a.k;
  const float* xs = a.block_scales.data() + i * a.blocks;
  const int64_t ng = w.groups();
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.q + r * w.row_bytes();
    float acc = 0.0f;
    for (int64_t b = 0; b < a.blocks; ++b) {
      const int64_t c0 = b * kBlock, c1 = std::min(w.k, c0 + kBlock);
      const int64_t g = c0 / w.group;  // a block lies inside one group (layout check)
      const int8_t* qb = q + c0;
      int32_t dot = 0, sum = 0;
      if (w.bits == 8) {
        for (int64_t c = 0; c < c1 - c0; ++c) {
          dot += int32_t(row[c0 + c]) * qb[c];
          sum += qb[c];
        }
      } else {
        const uint8_t* bytes = row + c0 / 2;
        for (int64_t j = 0; j < (c1 - c0) / 2; ++j) {
          dot += int32_t(bytes[j] & 0x0F) * qb[2 * j] + int32_t(bytes[j] >> 4) * qb[2 * j + 1];
          sum += qb[2 * j] + qb[2 * j + 1];
        }
      }
      dot -= w.zero(r, g) * sum;
      acc += float(dot) * (xs[b] * w.scales[r * ng + g]);
    }
    y[r] = acc;
  }
}

}  // namespace ingot::cpu::detail
