// Packing values into ggml's block formats (ggml-common.h's block structs), the inverse of
// gguf_dequant.h for the types ingot writes. Each block holds 32 weights of one row:
//
//   Q8_0  { f16 d; int8 qs[32]; }            w[i] = d * qs[i]
//   Q4_0  { f16 d; u8 qs[16]; }              w[i] = d * (q[i] - 8), q in 0..15
//   Q4_1  { f16 d; f16 m; u8 qs[16]; }       w[i] = d * q[i] + m,   q in 0..15
//   Q5_0  { f16 d; u32 qh; u8 qs[16]; }      w[i] = d * (q[i] - 16), q in 0..31
//   Q5_1  { f16 d; f16 m; u32 qh; u8 qs[16]; }  w[i] = d * q[i] + m, q in 0..31
//
// The 4-bit types hold weight j in the low nibble of qs[j] and weight j + 16 in its high
// nibble (j < 16); Q5_0 the same, with the fifth bit of weight j in bit j of qh. Scales are
// stored as IEEE half: the caller's float scale is rounded to nearest even, and the values
// a reader gets use that rounded scale.
//
// The k-quants hold 256 weights of one row (a super-block) with per-sub-block scales:
//
//   Q4_K  { f16 d; f16 dmin; u8 scales[12]; u8 qs[128]; }
//         8 sub-blocks of 32: w = d * sc[j] * q - dmin * m[j], sc / m 6-bit, q in 0..15
//   Q5_K  { f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }   as Q4_K, q in 0..31
//   Q6_K  { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d; }
//         16 sub-blocks of 16: w = d * sc[j] * (q - 32), sc in -128..127, q in 0..63
//
// Their bit layouts are gguf_dequant.cpp's (ggml's dequantize_row_*) read backwards; the
// k-quant writers take the levels and the 6- / 8-bit sub-block codes already chosen
// (ggml_quantize.h chooses them).
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
// Appends one Q5_0 block: scale d and 32 levels 0..31 (value d * (q - 16)).
void put_q5_0_block(float d, const uint8_t* q, std::vector<uint8_t>& out);
// Appends one Q5_1 block: scale d, minimum m and 32 levels 0..31 (value d * q + m).
void put_q5_1_block(float d, float m, const uint8_t* q, std::vector<uint8_t>& out);

inline constexpr int64_t kGgmlSuperBlock = 256;  // QK_K

// Appends one Q4_K (bits 4) or Q5_K (bits 5) super-block: d, dmin, the 6-bit codes sc[8]
// and m[8] (0..63) of its eight 32-weight sub-blocks, and 256 levels q (0..2^bits - 1).
void put_q4_k_block(float d, float dmin, const uint8_t* sc, const uint8_t* m, const uint8_t* q,
                    std::vector<uint8_t>& out);
void put_q5_k_block(float d, float dmin, const uint8_t* sc, const uint8_t* m, const uint8_t* q,
                    std::vector<uint8_t>& out);
// Appends one Q6_K super-block: d, the scales sc[16] of its 16-weight sub-blocks and 256
// levels q (0..63, value d * sc * (q - 32)).
void put_q6_k_block(float d, const int8_t* sc, const uint8_t* q, std::vector<uint8_t>& out);

// Plain element types: n floats as F32, F16 or BF16 bytes (rounded to nearest even).
void put_f32(const float* x, int64_t n, std::vector<uint8_t>& out);
void put_f16(const float* x, int64_t n, std::vector<uint8_t>& out);
void put_bf16(const float* x, int64_t n, std::vector<uint8_t>& out);

}  // namespace ingot::formats
