#include "ingot/formats/ggml_blocks.h"

#include <cstring>

#include "ingot/core/half.h"

namespace ingot::formats {
namespace {

void put_u16(uint16_t v, std::vector<uint8_t>& out) {
  out.push_back(uint8_t(v & 0xff));
  out.push_back(uint8_t(v >> 8));
}

// 32 levels 0..15: weight j in the low nibble of byte j, weight j + 16 in its high nibble.
void put_nibbles(const uint8_t* q, std::vector<uint8_t>& out) {
  for (int64_t j = 0; j < kGgmlBlock / 2; ++j)
    out.push_back(uint8_t((q[j] & 0x0f) | ((q[j + kGgmlBlock / 2] & 0x0f) << 4)));
}

}  // namespace

void put_q8_0_block(float d, const int8_t* q, std::vector<uint8_t>& out) {
  put_u16(Half::from_float(d), out);
  for (int64_t i = 0; i < kGgmlBlock; ++i) out.push_back(uint8_t(q[i]));
}

void put_q4_0_block(float d, const uint8_t* q, std::vector<uint8_t>& out) {
  put_u16(Half::from_float(d), out);
  put_nibbles(q, out);
}

void put_q4_1_block(float d, float m, const uint8_t* q, std::vector<uint8_t>& out) {
  put_u16(Half::from_float(d), out);
  put_u16(Half::from_float(m), out);
  put_nibbles(q, out);
}

void put_f32(const float* x, int64_t n, std::vector<uint8_t>& out) {
  const size_t at = out.size();
  out.resize(at + size_t(n) * 4);
  std::memcpy(out.data() + at, x, size_t(n) * 4);
}

void put_f16(const float* x, int64_t n, std::vector<uint8_t>& out) {
  out.reserve(out.size() + size_t(n) * 2);
  for (int64_t i = 0; i < n; ++i) put_u16(Half::from_float(x[i]), out);
}

void put_bf16(const float* x, int64_t n, std::vector<uint8_t>& out) {
  out.reserve(out.size() + size_t(n) * 2);
  for (int64_t i = 0; i < n; ++i) put_u16(BFloat16::round_from_float(x[i]), out);
}

}  // namespace ingot::formats
