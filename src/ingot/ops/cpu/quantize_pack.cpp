#include "ingot/ops/cpu/quantize_pack.h"

#include <algorithm>
#include <cmath>

#include "ingot/core/error.h"
#include "ingot/core/thread_pool.h"

namespace ingot::cpu {

namespace {

inline int clampi(int v, int lo, int hi) {
  return std::min(hi, std::max(lo, v));
}

}  // namespace

void quantize_group(const float* w, int64_t len, int bits, bool zero_point, uint8_t* q,
                    float& scale, uint8_t& zero) {
  if (bits == 8 || !zero_point) {
    float m = 0.0f;  // the value of largest magnitude
    for (int64_t i = 0; i < len; ++i)
      if (std::fabs(w[i]) > std::fabs(m)) m = w[i];
    const int offset = 1 << (bits - 1);
    if (bits == 8)
      scale = std::fabs(m) / 127.0f;
    else
      scale = m / -8.0f;
    if (scale == 0.0f) scale = 1.0f;
    const int lo = bits == 8 ? -127 : -8, hi = bits == 8 ? 127 : 7;
    for (int64_t i = 0; i < len; ++i)
      q[i] = uint8_t(clampi(int(std::lrint(w[i] / scale)), lo, hi) + offset);
    zero = uint8_t(offset);
    return;
  }
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < len; ++i) {
    lo = std::min(lo, w[i]);
    hi = std::max(hi, w[i]);
  }
  scale = (hi - lo) / 15.0f;
  if (scale == 0.0f) scale = 1.0f;
  const int z = clampi(int(std::lrint(-lo / scale)), 0, 15);
  zero = uint8_t(z);
  for (int64_t i = 0; i < len; ++i)
    q[i] = uint8_t(clampi(int(std::lrint(w[i] / scale)) + z, 0, 15));
}

PackedBuffers quantize_weight(const float* w, int64_t n, int64_t k, int bits, int64_t group,
                              bool zero_point) {
  INGOT_CHECK(bits == 8 || bits == 4, ValueError, "[quantize_weight] bits must be 8 or 4, got {}",
              bits);
  INGOT_CHECK(group > 0 && k % group == 0 && (bits == 8 || group % 2 == 0), ValueError,
              "[quantize_weight] group size {} must divide in_features {}", group, k);
  const int64_t groups = k / group;
  std::vector<uint8_t> values(size_t(n * k));
  std::vector<float> scales(size_t(n * groups));
  std::vector<uint8_t> zeros(zero_point ? size_t(n * groups) : 0);
  parallel_for(0, n, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t g = 0; g < groups; ++g) {
        uint8_t zero = 0;
        quantize_group(w + r * k + g * group, group, bits, zero_point,
                       values.data() + r * k + g * group, scales[size_t(r * groups + g)], zero);
        if (zero_point) zeros[size_t(r * groups + g)] = zero;
      }
    }
  });
  return pack_weight(values.data(), std::move(scales), std::move(zeros), n, k, bits);
}

PackedBuffers pack_weight(const uint8_t* values, std::vector<float> scales,
                          std::vector<uint8_t> zeros, int64_t n, int64_t k, int bits) {
  PackedBuffers out;
  out.scales = std::move(scales);
  out.zeros = std::move(zeros);
  if (bits == 8) {
    out.q.assign(values, values + n * k);
    return out;
  }
  out.q.assign(size_t(n * k / 2), 0);
  for (int64_t i = 0; i < n * k; i += 2)
    out.q[size_t(i / 2)] = uint8_t(values[i] | (values[i + 1] << 4));
  return out;
}

}  // namespace ingot::cpu
