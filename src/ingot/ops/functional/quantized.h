// Weight-only quantised linear layers (the export quantizer's op, exporters/quantize.h).
//
//   y = quantized_linear(x, qweight, scales, zeros, bias, bits, group_size)
//     == linear(x, dequantize_weight(qweight, scales, zeros, bits, group_size), bias)
//
// qweight uint8 [out, in] (bits 8) or [out, in / 2] (bits 4, two weights per byte, the
// even one in the low nibble); scales f32 [out, in / group_size]; zeros uint8 [out,
// in / group_size] or undefined (then 2^(bits-1)). W = (q - z) * s. Layout and kernels:
// ops/cpu/quantized_gemv.h.
#pragma once

#include <source_location>

#include "ingot/core/tensor.h"

namespace ingot {

Tensor quantized_linear(const Tensor& input, const Tensor& qweight, const Tensor& scales,
                        const Tensor& zeros, const Tensor& bias, int64_t bits, int64_t group_size,
                        std::source_location where = std::source_location::current());

// A float weight [out, in] quantised into the packed layout (ops/cpu/quantize_pack.h):
// qweight uint8, scales f32 [out, in / group_size], zeros uint8 (zero_point) or undefined.
// bits 8 takes group_size = in (per output channel).
struct PackedLinearWeight {
  Tensor qweight, scales, zeros;
};
PackedLinearWeight quantize_linear_weight(const Tensor& weight, int64_t bits, int64_t group_size,
                                          bool zero_point);

// Rows of an int8 table packed per row or per group (bits 8, no zero points: what an int8
// lm_head tied to the embedding is, G = dim; a GGUF's Q8_0 table, G = 32):
//   quantized_embedding(qweight, scales, indices)
//     == embedding(dequantize_weight(qweight, scales, {}, 8, G), indices)
// qweight uint8 [num_embeddings, dim], scales f32 [num_embeddings, dim / G]; -> f32
// [..., dim]. Written by the runtime's rewrite (runtime/passes/int8_embedding_tables.h)
// and by an nn::Embedding in packed form (a GGUF's Q8_0 token_embd).
Tensor quantized_embedding(const Tensor& qweight, const Tensor& scales, const Tensor& indices,
                           std::source_location where = std::source_location::current());

// The float weight [out, in] (f32) of a packed one, through core ops (the decomposition).
Tensor dequantize_weight(const Tensor& qweight, const Tensor& scales, const Tensor& zeros,
                         int64_t bits, int64_t group_size,
                         std::source_location where = std::source_location::current());

}  // namespace ingot
