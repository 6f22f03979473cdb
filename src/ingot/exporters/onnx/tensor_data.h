// TensorProto <-> ingot tensors and raw element bytes.
//
// ingot writes tensor payloads as raw_data (little-endian element bytes, bool as one
// byte, f16/bf16 as their 16-bit patterns). Other producers may use the typed fields;
// tensor_bytes() turns either form into raw bytes, checking the element count against
// dims, so a tensor read from an untrusted file is safe to use.
#pragma once

#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/exporters/onnx/model.h"

namespace ingot::exporters::onnx {

// Product of dims; IoError (naming `where`) on a negative dim or when it overflows.
int64_t tensor_numel(const TensorProto& t, const std::string& where = "tensor");
// numel * element size; NotSupportedError for string and sub-byte element types.
size_t tensor_nbytes(const TensorProto& t, const std::string& where = "tensor");

// A TensorProto holding t's elements as raw_data. A contiguous tensor is not copied:
// raw_data views its storage and keeps it alive (weights stay where they are).
TensorProto make_tensor(std::string name, const Tensor& t);

// A TensorProto of `values` with the given dims (numel must match: ValueError).
template <typename T>
TensorProto make_tensor(std::string name, const std::vector<T>& values,
                        const std::vector<int64_t>& dims) {
  return make_tensor(std::move(name),
                     Tensor::from_vector(values, IntShape(dims.begin(), dims.end())));
}

// The tensor's elements as little-endian raw bytes (numel * element size), from
// raw_data or whichever typed field holds them. IoError when the amount of data does
// not match dims, or the tensor still refers to external data (load it first:
// reader.h load_external_data).
Bytes tensor_bytes(const TensorProto& t, const std::string& where = "tensor");

// The tensor as an ingot Tensor of the matching dtype. raw_data that is suitably
// aligned is viewed read-only (no copy); anything else is copied.
Tensor to_tensor(const TensorProto& t);

}  // namespace ingot::exporters::onnx
