// Quantising a float weight into quantized_gemv.h's packed layout (what the export
// quantizer stores). Round to nearest; groups along k.
//  - bits 8, symmetric per row (group = k): s = max|w| / 127, q = round(w / s) + 128.
//  - bits 4, symmetric: s = m / -8 for the group's value m of largest magnitude, so m maps
//    to -8 and the rest of [-8, 7] is used; q = clamp(round(w / s), -8, 7) + 8.
//  - bits 4 with zero points: s = (max - min) / 15 over the group (range widened to hold
//    0), z = clamp(round(-min / s), 0, 15), q = clamp(round(w / s) + z, 0, 15).
// An all-zero group gets s = 1 (q = z) so no division by zero reaches the kernels.
#pragma once

#include <cstdint>
#include <vector>

namespace ingot::cpu {

struct PackedBuffers {
  std::vector<uint8_t> q;      // [n, k] or [n, k / 2]
  std::vector<float> scales;   // [n, k / group]
  std::vector<uint8_t> zeros;  // [n, k / group], empty when symmetric
};

// Round to nearest on the range rule above: one group's values (0 .. 2^bits - 1), its
// scale and zero point (2^(bits-1) when symmetric).
void quantize_group(const float* w, int64_t len, int bits, bool zero_point, uint8_t* q,
                    float& scale, uint8_t& zero);

// Packs integer values [n, k] (0 .. 2^bits - 1; two 4-bit values per byte, the lower
// column in the low nibble) with their group scales [n, k / group] and zero points
// (empty when symmetric) into the layout above.
PackedBuffers pack_weight(const uint8_t* values, std::vector<float> scales,
                          std::vector<uint8_t> zeros, int64_t n, int64_t k, int bits);

// w f32 [n, k] row-major. k % group == 0 (bits 8: group == k). Throws ValueError else.
PackedBuffers quantize_weight(const float* w, int64_t n, int64_t k, int bits, int64_t group,
                              bool zero_point);

}  // namespace ingot::cpu
