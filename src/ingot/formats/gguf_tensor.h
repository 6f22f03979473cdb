// GGUF tensors as ingot Tensors: plain element types viewed in place, block types
// dequantised (gguf_dequant.h).
#pragma once

#include "ingot/core/tensor.h"
#include "ingot/formats/gguf.h"

namespace ingot::formats {

// A GGUF tensor as ingot holds it, in its PyTorch shape (ne reversed): F32, F16, BF16,
// F64 and the integer types are read-only views of the mapping (no copy); block types are
// dequantised into a new float32 tensor. NotSupportedError naming the tensor and type for
// a block type dequantize_row lacks.
Tensor gguf_tensor(const GgufFile& file, const GgufTensorInfo& info);

}  // namespace ingot::formats
