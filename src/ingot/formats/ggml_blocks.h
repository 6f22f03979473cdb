// Packing values into ggml's block formats (ggml-common.h's block structs), the inverse of
// gguf_dequant.h for the types ingot writes. Each block holds 32 weights of one row:
//
//   Q8_0  { f16 d; int8 qs[32]; }            w[i] = d * qs[i]
//   Q4_0  { f16 d; u8 qs[16]; }              w[i] = d * (q[i] - 8), q in 0..15
//   Q4_1  { f16 d; f16 m; u8 qs[16]; }       w[i] = d * q[i] + m,   q in 0..15
//
// The 4-bit types hold weight j in the low nibble of qs[j] and weight j + 16 in its high
// nibble (j < 16). Scales are stored as IEEE half: the caller's float scale is rounded to
// nearest even, and the values a reader gets use that rounded scale.
// This file knows nothing about models or ingot's own packed layout.
#pragma once

#include <cstdint>
#include <vector>

namespace ingot::formats {

inline constexpr int64_t kGgmlBlock = 32;  // QK8_0 = QK4_0 = QK4_1

// Appends one Q8_0 block: scale d and 32 signed levels.
void put_q8_0_block(float d, const int8_t* q, std::vector<uint8_t>& out);
// Appends one Q4_0 block: scale d and 32 levels 0..15 (value d * (q - 8)).
void put_q4_0_block(float d, const uint8_t* q, std::vector<uint8_t>& out);
// Appends one Q4_1 block: scale d, minimum m and 32 levels 0..15 (value d * q + m).
void put_q4_1_block(float d, float m, const uint8_t* q, std::vector<uint8_t>& out);

// Plain element types: n floats as F32, F16 or BF16 bytes (rounded to nearest even).
void put_f32(const float* x, int64_t n, std::vector<uint8_t>& out);
void put_f16(const float* x, int64_t n, std::vector<uint8_t>& out);
void put_bf16(const float* x, int64_t n, std::vector<uint8_t>& out);

}  // namespace ingot::formats
