#include "ingot/formats/gguf_dequant.h"

#include <bit>
#include <cstring>

#include "ingot/core/half.h"
#include "ingot/core/error.h"

namespace ingot::formats {
namespace {

constexpr int kQK = 32;    // elements of a legacy block (QK4_0 = QK8_0 = ... = 32)
constexpr int kQKK = 256;  // elements of a k-quant super-block (QK_K)

float f16(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return Half::to_float(bits);
}

uint32_t u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Q4_0: {f16 d; u8 qs[16]}. Element j is the low nibble of qs[j], element j + 16 the
// high one; value = (q - 8) * d.
void q4_0(const uint8_t* b, float* y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = float((qs[j] & 0x0F) - 8) * d;
    y[j + kQK / 2] = float((qs[j] >> 4) - 8) * d;
  }
}

// Q4_1: {f16 d; f16 m; u8 qs[16]}; value = q * d + m.
void q4_1(const uint8_t* b, float* y) {
  const float d = f16(b), m = f16(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = float(qs[j] & 0x0F) * d + m;
    y[j + kQK / 2] = float(qs[j] >> 4) * d + m;
  }
}

// Q5_0: {f16 d; u32 qh; u8 qs[16]}; bit j of qh is the fifth bit of element j;
// value = (q - 16) * d.
void q5_0(const uint8_t* b, float* y) {
  const float d = f16(b);
  const uint32_t qh = u32(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < kQK / 2; ++j) {
    const int h0 = int((qh >> j) & 1u) << 4;
    const int h1 = int((qh >> (j + 16)) & 1u) << 4;
    y[j] = float(((qs[j] & 0x0F) | h0) - 16) * d;
    y[j + kQK / 2] = float(((qs[j] >> 4) | h1) - 16) * d;
  }
}

// Q5_1: {f16 d; f16 m; u32 qh; u8 qs[16]}; value = q * d + m.
void q5_1(const uint8_t* b, float* y) {
  const float d = f16(b), m = f16(b + 2);
  const uint32_t qh = u32(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < kQK / 2; ++j) {
    const int h0 = int((qh >> j) & 1u) << 4;
    const int h1 = int((qh >> (j + 16)) & 1u) << 4;
    y[j] = float((qs[j] & 0x0F) | h0) * d + m;
    y[j + kQK / 2] = float((qs[j] >> 4) | h1) * d + m;
  }
}

// Q8_0: {f16 d; i8 qs[32]}; value = q * d.
void q8_0(const uint8_t* b, float* y) {
  const float d = f16(b);
  const auto* qs = reinterpret_cast<const int8_t*>(b + 2);
  for (int j = 0; j < kQK; ++j) y[j] = float(qs[j]) * d;
}

// Q2_K: {u8 scales[16]; u8 qs[64]; f16 d; f16 dmin}. 16 groups of 16; group g has scale
// (scales[g] & 15) * d and min (scales[g] >> 4) * dmin; 2-bit values, four per byte:
// half h (128 values) reads qs[32h .. 32h+32) at shifts 0, 2, 4, 6.
void q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* q = b + 16;
  const float d = f16(b + 80), dmin = f16(b + 82);
  int is = 0;
  for (int n = 0; n < kQKK; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const uint8_t sc = scales[is++];
        const float dl = d * float(sc & 0x0F), ml = dmin * float(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
      }
    }
    q += 32;
  }
}

// The 16 six-bit scales of Q3_K from its 12 bytes: low nibbles from bytes 0..7 (scale i:
// byte i % 8, nibble i / 8), high two bits from bytes 8..11 (byte 8 + i % 4, pair i / 4).
void q3_k_scales(const uint8_t* s, int8_t* out) {
  for (int i = 0; i < 16; ++i) {
    const int lo = (s[i % 8] >> (4 * (i / 8))) & 0x0F;
    const int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 0x03;
    out[i] = int8_t((lo | (hi << 4)) - 32);
  }
}

// Q3_K: {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}. 2 low bits as in Q2_K, a high
// bit from hmask (bit m of hmask[l]); value = d * scale * (q - (high bit set ? 0 : 4)).
void q3_k(const uint8_t* b, float* y) {
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  int8_t scales[16];
  q3_k_scales(b + 96, scales);
  const float d_all = f16(b + 108);
  int is = 0;
  uint8_t m = 1;
  for (int n = 0; n < kQKK; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const float dl = d_all * float(scales[is++]);
        for (int l = 16 * half; l < 16 * half + 16; ++l) {
          const int v = ((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4);
          *y++ = dl * float(v);
        }
      }
      m <<= 1;
    }
    q += 32;
  }
}

// The 6-bit scale and min of group j (0..7) of Q4_K / Q5_K (get_scale_min_k4).
void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& mn) {
  if (j < 4) {
    sc = q[j] & 63;
    mn = q[j + 4] & 63;
  } else {
    sc = uint8_t((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4));
    mn = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q4_K: {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}. 8 groups of 32; each 64 values read
// 32 bytes, low nibbles then high; value = d * sc * q - dmin * m.
void q4_k(const uint8_t* b, float* y) {
  const float d = f16(b), dmin = f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  int is = 0;
  for (int j = 0; j < kQKK; j += 64) {
    uint8_t sc, mn;
    scale_min_k4(is, scales, sc, mn);
    const float d1 = d * float(sc), m1 = dmin * float(mn);
    scale_min_k4(is + 1, scales, sc, mn);
    const float d2 = d * float(sc), m2 = dmin * float(mn);
    for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0x0F) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
    q += 32;
    is += 2;
  }
}

// Q5_K: {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K with a fifth bit
// per value from qh (bit 2k for the low nibbles of the k-th 64, bit 2k+1 for the high).
void q5_k(const uint8_t* b, float* y) {
  const float d = f16(b), dmin = f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* ql = b + 48;
  int is = 0;
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0; j < kQKK; j += 64) {
    uint8_t sc, mn;
    scale_min_k4(is, scales, sc, mn);
    const float d1 = d * float(sc), m1 = dmin * float(mn);
    scale_min_k4(is + 1, scales, sc, mn);
    const float d2 = d * float(sc), m2 = dmin * float(mn);
    for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0x0F) + ((qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    ql += 32;
    is += 2;
    u1 <<= 2;
    u2 <<= 2;
  }
}

// Q6_K: {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}. Per 128 values: low 4 bits from
// 64 bytes of ql, high 2 bits from 32 bytes of qh; value = d * scale * (q - 32).
void q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = f16(b + 208);
  for (int n = 0; n < kQKK; n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = int((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = int((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * float(sc[is]) * float(q1);
      y[l + 32] = d * float(sc[is + 2]) * float(q2);
      y[l + 64] = d * float(sc[is + 4]) * float(q3);
      y[l + 96] = d * float(sc[is + 6]) * float(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

using BlockFn = void (*)(const uint8_t*, float*);

BlockFn block_fn(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
      return q4_0;
    case GgmlType::Q4_1:
      return q4_1;
    case GgmlType::Q5_0:
      return q5_0;
    case GgmlType::Q5_1:
      return q5_1;
    case GgmlType::Q8_0:
      return q8_0;
    case GgmlType::Q2_K:
      return q2_k;
    case GgmlType::Q3_K:
      return q3_k;
    case GgmlType::Q4_K:
      return q4_k;
    case GgmlType::Q5_K:
      return q5_k;
    case GgmlType::Q6_K:
      return q6_k;
    default:
      return nullptr;
  }
}

}  // namespace

bool can_dequantize(GgmlType type) {
  return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 ||
         block_fn(type) != nullptr;
}

void dequantize_row(GgmlType type, const uint8_t* src, float* dst, int64_t n) {
  if (n <= 0) return;  // empty tensors: dst may be null
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case GgmlType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = f16(src + 2 * i);
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, 2);
        dst[i] = std::bit_cast<float>(uint32_t(bits) << 16);
      }
      return;
    default:
      break;
  }
  const BlockFn fn = block_fn(type);
  INGOT_CHECK(fn != nullptr, NotSupportedError,
              "[gguf] dequantising ggml type {} is not supported (supported: F32, F16, BF16, "
              "Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)",
              ggml_type_name(type));
  const GgmlTypeTraits t = *ggml_type_traits(uint32_t(type));
  INGOT_CHECK(n % t.block_size == 0, ValueError,
              "[gguf] dequantize_row: {} elements are not whole {} blocks of {}", n, t.name,
              t.block_size);
  for (int64_t b = 0; b < n / t.block_size; ++b) fn(src + b * t.type_size, dst + b * t.block_size);
}

}  // namespace ingot::formats
