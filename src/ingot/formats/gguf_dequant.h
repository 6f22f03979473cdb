// ggml's block formats turned into floats, value for value as llama.cpp's dequantize_row_*
// (ggml-quants.c) computes them: the same float32 operations in the same order, so every
// output equals ggml's bit for bit (the baseline x86-64 build contracts no FMAs).
//
// Supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
// The IQ*, TQ*, MXFP4 and Q8_1 / Q8_K types are a NotSupportedError naming the type.
#pragma once

#include <cstdint>

#include "ingot/formats/ggml_types.h"

namespace ingot::formats {

bool can_dequantize(GgmlType type);

// Writes n floats (n a multiple of the type's block size) decoded from `src`, which holds
// n / block_size blocks. NotSupportedError naming the type when it cannot.
void dequantize_row(GgmlType type, const uint8_t* src, float* dst, int64_t n);

}  // namespace ingot::formats
