// GGUF block tensors kept packed: the ggml types whose blocks are exactly ingot's packed
// quantised weights (ops/cpu/quantized_gemv.h), repacked once from the mapped blocks into
// ingot's layout, with no float32 intermediate.
//
// The table (gguf_packed_layout), ggml type -> ingot weight:
//   Q4_0  {f16 d; u8 qs[16]}  w = d * (q - 8)   -> int4, group 32, symmetric (fixed zero 8)
//   Q8_0  {f16 d; i8 qs[32]}  w = d * q         -> int8, group 32, symmetric (fixed zero 128)
// Every other type has no exact ingot form and is dequantised (gguf_tensor.h): Q4_1 / Q5_1
// hold w = d * q + m, which is (q - z) * s only when m / d is an integer; Q5_0 has 5-bit
// levels; the k-quants have two-level (sub-block) scales.
//
// Invariants of the result: scales are the f16 d widened to f32 (exact), and
// (q - z) * s is the very float32 product ggml's dequantize_row_q4_0 / _q8_0 computes, so
// the packed weight dequantises bit for bit to gguf_tensor's floats.
// Nibble order: ggml puts weight j of a block in the low nibble of qs[j] and weight j + 16
// in its high nibble; ingot puts weight 2j in the low nibble of byte j and 2j + 1 in the high
// one, so each block's 16 bytes are re-paired. Q8_0's signed levels are stored + 128.
// This file knows nothing about models.
#pragma once

#include <optional>

#include "ingot/core/tensor.h"
#include "ingot/formats/gguf.h"

namespace ingot::formats {

// An ingot packed weight layout: `bits` per weight, one f32 scale per `group` weights of a
// row, fixed zero point 2^(bits-1) (no zero points tensor).
struct PackedLayout {
  int bits = 0;
  int64_t group = 0;
  bool operator==(const PackedLayout&) const = default;
};

// The ingot layout `type` maps onto exactly; nullopt for a type that is dequantised.
std::optional<PackedLayout> gguf_packed_layout(GgmlType type);

// A packed GGUF matrix in ingot's layout: qweight uint8 [rows, cols * bits / 8], scales f32
// [rows, cols / group] (rows, cols: the tensor's PyTorch shape).
struct GgufPackedTensor {
  Tensor qweight, scales;
  PackedLayout layout;
};

// Whether `info` is kept packed: a 2-D tensor of a type gguf_packed_layout maps.
bool gguf_keeps_packed(const GgufTensorInfo& info);

// Repacks `info`'s blocks (a tensor gguf_keeps_packed accepts; ValueError naming the file and
// tensor otherwise). Threaded over rows.
GgufPackedTensor gguf_packed_tensor(const GgufFile& file, const GgufTensorInfo& info);

}  // namespace ingot::formats
