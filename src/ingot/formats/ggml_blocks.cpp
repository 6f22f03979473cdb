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

namespace {

// The fifth bits of 32 five-bit levels: bit j of a little-endian u32 for weight j.
void put_fifth_bits(const uint8_t* q, std::vector<uint8_t>& out) {
  uint32_t qh = 0;
  for (int64_t j = 0; j < kGgmlBlock; ++j) qh |= uint32_t((q[j] >> 4) & 1) << j;
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(qh >> (8 * i)));
}

}  // namespace

void put_q5_0_block(float d, const uint8_t* q, std::vector<uint8_t>& out) {
  put_u16(Half::from_float(d), out);
  put_fifth_bits(q, out);
  put_nibbles(q, out);
}

void put_q5_1_block(float d, float m, const uint8_t* q, std::vector<uint8_t>& out) {
  put_u16(Half::from_float(d), out);
  put_u16(Half::from_float(m), out);
  put_fifth_bits(q, out);
  put_nibbles(q, out);
}

namespace {

// The 12 bytes holding eight 6-bit scale codes sc and min codes m of Q4_K / Q5_K: codes
// 0..3 in the low 6 bits of bytes 0..3 (sc) and 4..7 (m); codes 4..7 have their low 4 bits
// in bytes 8..11 (sc low nibble, m high nibble) and their top 2 bits in the top 2 bits of
// bytes 0..3 (sc) and 4..7 (m).
void put_k4_scales(const uint8_t* sc, const uint8_t* m, std::vector<uint8_t>& out) {
  uint8_t s[12] = {};
  for (int j = 0; j < 4; ++j) {
    s[j] = uint8_t(sc[j] & 63);
    s[j + 4] = uint8_t(m[j] & 63);
  }
  for (int j = 4; j < 8; ++j) {
    s[j + 4] = uint8_t((sc[j] & 0x0f) | ((m[j] & 0x0f) << 4));
    s[j - 4] |= uint8_t(((sc[j] >> 4) & 3) << 6);
    s[j] |= uint8_t(((m[j] >> 4) & 3) << 6);
  }
  out.insert(out.end(), s, s + 12);
}

// The low nibbles of 256 levels: each 64 weights take 32 bytes, weight l of the 64 in the
// low nibble of byte l and weight l + 32 in its high nibble.
void put_k_nibbles(const uint8_t* q, std::vector<uint8_t>& out) {
  for (int64_t j = 0; j < kGgmlSuperBlock; j += 64)
    for (int l = 0; l < 32; ++l)
      out.push_back(uint8_t((q[j + l] & 0x0f) | ((q[j + l + 32] & 0x0f) << 4)));
}

}  // namespace

void put_q4_k_block(float d, float dmin, const uint8_t* sc, const uint8_t* m, const uint8_t* q,
                    std::vector<uint8_t>& out) {
  put_u16(Half::from_float(d), out);
  put_u16(Half::from_float(dmin), out);
  put_k4_scales(sc, m, out);
  put_k_nibbles(q, out);
}

void put_q5_k_block(float d, float dmin, const uint8_t* sc, const uint8_t* m, const uint8_t* q,
                    std::vector<uint8_t>& out) {
  put_u16(Half::from_float(d), out);
  put_u16(Half::from_float(dmin), out);
  put_k4_scales(sc, m, out);
  // qh[l]: the fifth bits; the k-th 64 weights use bit 2k (weight l) and 2k + 1 (l + 32).
  uint8_t qh[32] = {};
  for (int k = 0; k < 4; ++k) {
    for (int l = 0; l < 32; ++l) {
      qh[l] |= uint8_t(((q[64 * k + l] >> 4) & 1) << (2 * k));
      qh[l] |= uint8_t(((q[64 * k + l + 32] >> 4) & 1) << (2 * k + 1));
    }
  }
  out.insert(out.end(), qh, qh + 32);
  put_k_nibbles(q, out);
}

void put_q6_k_block(float d, const int8_t* sc, const uint8_t* q, std::vector<uint8_t>& out) {
  // Per 128 weights: ql 64 bytes (weights l and l + 64 in byte l's nibbles, l + 32 and
  // l + 96 in byte l + 32's), qh 32 bytes (the top 2 bits of l, l + 32, l + 64, l + 96).
  uint8_t ql[128], qh[64];
  for (int h = 0; h < 2; ++h) {
    const uint8_t* w = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      ql[64 * h + l] = uint8_t((w[l] & 0x0f) | ((w[l + 64] & 0x0f) << 4));
      ql[64 * h + l + 32] = uint8_t((w[l + 32] & 0x0f) | ((w[l + 96] & 0x0f) << 4));
      qh[32 * h + l] = uint8_t(((w[l] >> 4) & 3) | (((w[l + 32] >> 4) & 3) << 2) |
                               (((w[l + 64] >> 4) & 3) << 4) | (((w[l + 96] >> 4) & 3) << 6));
    }
  }
  out.insert(out.end(), ql, ql + 128);
  out.insert(out.end(), qh, qh + 64);
  for (int j = 0; j < 16; ++j) out.push_back(uint8_t(sc[j]));
  put_u16(Half::from_float(d), out);
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
