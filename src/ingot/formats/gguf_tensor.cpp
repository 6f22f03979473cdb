#include "ingot/formats/gguf_tensor.h"

#include <cstring>

#include "ingot/core/thread_pool.h"
#include "ingot/formats/gguf_dequant.h"

namespace ingot::formats {
namespace {

// The ingot dtype a GGUF element type is viewed as without conversion.
std::optional<DType> plain_dtype(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
      return DType::F32;
    case GgmlType::F16:
      return DType::F16;
    case GgmlType::BF16:
      return DType::BF16;
    case GgmlType::F64:
      return DType::F64;
    case GgmlType::I8:
      return DType::I8;
    case GgmlType::I16:
      return DType::I16;
    case GgmlType::I32:
      return DType::I32;
    case GgmlType::I64:
      return DType::I64;
    default:
      return std::nullopt;
  }
}

}  // namespace

Tensor gguf_tensor(const GgufFile& file, const GgufTensorInfo& info) {
  const std::vector<int64_t> dims = info.shape();
  const IntShape shape(dims.begin(), dims.end());
  if (auto dtype = plain_dtype(info.type)) {
    auto storage = file.tensor_storage(info);
    Tensor t = Tensor::from_storage(storage, *dtype, shape, contiguous_strides(shape), 0);
    if (reinterpret_cast<uintptr_t>(storage->data()) % itemsize(*dtype) == 0) return t;
    Tensor aligned = Tensor::empty(shape, *dtype);  // misaligned (alignment < itemsize)
    if (aligned.nbytes() > 0) std::memcpy(aligned.raw_data(), storage->data(), aligned.nbytes());
    return aligned;
  }
  INGOT_CHECK(can_dequantize(info.type), NotSupportedError,
              "[gguf] '{}': tensor '{}' has ggml type {}, which ingot cannot dequantise yet "
              "(supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K..Q6_K)",
              file.path(), info.name, ggml_type_name(info.type));
  Tensor out = Tensor::empty(shape, DType::F32);
  const GgmlTypeTraits t = *ggml_type_traits(uint32_t(info.type));
  const int64_t blocks = info.numel() / t.block_size;
  const uint8_t* src = file.tensor_data(info);
  float* dst = out.data<float>();
  parallel_for(0, blocks, 1024, [&](int64_t b0, int64_t b1) {
    dequantize_row(info.type, src + b0 * t.type_size, dst + b0 * t.block_size,
                   (b1 - b0) * t.block_size);
  });
  return out;
}

}  // namespace ingot::formats
