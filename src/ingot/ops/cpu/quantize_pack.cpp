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

// Quantised values (0 .. 2^bits - 1) of one group, its scale and zero point.
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

}  // namespace

PackedBuffers quantize_weight(const float* w, int64_t n, int64_t k, int bits, int64_t group,
                              bool zero_point) {
  INGOT_CHECK(bits == 8 || bits == 4, ValueError, "[quantize_weight] bits must be 8 or 4, got {}",
              bits);
  INGOT_CHECK(group > 0 && k % group == 0 && (bits == 8 || group % 2 == 0), ValueError,
              "[quantize_weight] group size {} must divide in_features {}", group, k);
  const int64_t groups = k / group;
  PackedBuffers out;
  out.q.assign(size_t(bits == 8 ? n * k : n * k / 2), 0);
  out.scales.assign(size_t(n * groups), 0.0f);
  if (zero_point) out.zeros.assign(size_t(n * groups), 0);
  parallel_for(0, n, 64, [&](int64_t r0, int64_t r1) {
    std::vector<uint8_t> values(static_cast<size_t>(group));
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t g = 0; g < groups; ++g) {
        uint8_t zero = 0;
        quantize_group(w + r * k + g * group, group, bits, zero_point, values.data(),
                       out.scales[size_t(r * groups + g)], zero);
        if (zero_point) out.zeros[size_t(r * groups + g)] = zero;
        const int64_t c0 = g * group;
        if (bits == 8) {
          std::copy(values.begin(), values.end(), out.q.begin() + r * k + c0);
        } else {
          uint8_t* row = out.q.data() + r * (k / 2);
          for (int64_t i = 0; i < group; i += 2)
            row[(c0 + i) / 2] = uint8_t(values[size_t(i)] | (values[size_t(i + 1)] << 4));
        }
      }
    }
  });
  return out;
}

}  // namespace ingot::cpu
