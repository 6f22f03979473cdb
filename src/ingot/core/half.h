// 16-bit floating-point storage types: IEEE half (f16) and bfloat16.
//
// Both are plain 2-byte bit containers; arithmetic happens in float. Conversions from
// float round to nearest even and keep NaN a NaN, matching PyTorch's c10::Half and
// c10::BFloat16 bit for bit.
#pragma once

#include <bit>
#include <cstdint>

namespace ingot {

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  static constexpr BFloat16 from_bits(uint16_t b) {
    BFloat16 v;
    v.bits = b;
    return v;
  }
  BFloat16(float f) : bits(round_from_float(f)) {}  // NOLINT: implicit like c10
  operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

  static uint16_t round_from_float(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
    uint32_t rounding_bias = 0x7fffu + ((u >> 16) & 1u);
    return uint16_t((u + rounding_bias) >> 16);
  }
};

struct Half {
  uint16_t bits = 0;

  Half() = default;
  static constexpr Half from_bits(uint16_t b) {
    Half v;
    v.bits = b;
    return v;
  }
  Half(float f) : bits(from_float(f)) {}  // NOLINT: implicit like c10
  operator float() const { return to_float(bits); }

  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t out;
    if (exp == 0x1f) {
      out = sign | 0x7f800000u | (mant << 13);  // inf / nan
    } else if (exp != 0) {
      out = sign | ((exp + 112) << 23) | (mant << 13);  // normal: rebias 15 -> 127
    } else if (mant == 0) {
      out = sign;  // signed zero
    } else {
      // subnormal half: normalise into a float normal.
      int shift = 0;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        ++shift;
      }
      mant &= 0x3ffu;
      out = sign | (uint32_t(113 - shift) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(out);
  }

  static uint16_t from_float(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return sign | 0x7e00u;  // NaN
    if (abs >= 0x477ff000u) return sign | 0x7c00u;  // overflow (incl. inf) after rounding
    if (abs < 0x38800000u) {
      // Result is subnormal or zero: add a magic number so the FPU does the rounding.
      float magic = std::bit_cast<float>(abs) + 0.5f;
      return sign | uint16_t(std::bit_cast<uint32_t>(magic) - std::bit_cast<uint32_t>(0.5f));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (127 -> 15) and round to nearest even
    return sign | uint16_t(abs >> 13);
  }
};

}  // namespace ingot
