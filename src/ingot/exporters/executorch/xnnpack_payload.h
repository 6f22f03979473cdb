// The XNNPACK delegate's payload: what ExecuTorch's XnnpackBackend receives as a
// delegate's processed data (BackendDelegateInlineData), written by ingot with
// FlatBufferBuilder's table API (no generated code).
//
// Facts from the schema the `executorch` package ships
// (backends/xnnpack/serialization/schema.fbs: namespace fb_xnnpack, root XNNGraph, file
// identifier "XN01") and its payload layout (xnnpack_graph_serialize.py):
//
//   [0, 32)   XNNHeader, padded to 16: 4 zero bytes, "XH00", u16 header length (30),
//             u32 flatbuffer offset, u32 flatbuffer size, u32 constant data offset,
//             u64 constant data size (little endian)
//   [fb, ..)  the XNNGraph flatbuffer, padded to 16
//   [cd, ..)  constant data: each constant 16-byte aligned at
//             XNNGraph.constant_data[i].offset (entry 0 is reserved: "not constant")
//
// A graph's values are tensors (XNNTensorValue: datatype, dims (the upper bounds of a
// dynamic tensor: the runtime reshapes the external values to the actual sizes),
// constant index, external id, flags, id). External values are the delegate call's
// arguments: external id k is argument k (inputs first, then outputs), flagged
// EXTERNAL_INPUT / EXTERNAL_OUTPUT.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/exporters/executorch/pte_program.h"

namespace ingot::exporters::executorch::xnnpack {

constexpr uint32_t kInvalidValueId = 0xFFFFFFFFu;  // XNN_INVALID_VALUE_ID
constexpr uint32_t kFlagExternalInput = 0x1;        // XNN_VALUE_FLAG_EXTERNAL_INPUT
constexpr uint32_t kFlagExternalOutput = 0x2;       // XNN_VALUE_FLAG_EXTERNAL_OUTPUT

// An XNNPACK subgraph being built: values by id (id_out), nodes in order.
class GraphBuilder {
 public:
  // A float32 external input / output: the delegate call's next argument.
  uint32_t external_input(const std::vector<int64_t>& dims);
  uint32_t external_output(const std::vector<int64_t>& dims);
  // A float32 constant (its bytes copied into the payload's constant data).
  uint32_t constant(const Tensor& data);

  // y = x W^T + b (linear): x [..., k], filter [n, k], bias [n].
  void fully_connected(uint32_t input, uint32_t filter, uint32_t bias, uint32_t output);
  // out = a @ b batched: a [b..., m, k], b [b..., k, n].
  void batch_matrix_multiply(uint32_t a, uint32_t b, uint32_t output);

  // The payload: header and flatbuffer (head), then the constant data (the weights,
  // streamed from their tensors when the .pte is written).
  DelegateBlob finish() const;

  struct Value {
    std::vector<int64_t> dims;
    uint32_t constant_index = 0;  // > 0: constants_[index - 1]
    uint32_t external_id = kInvalidValueId;
    uint32_t flags = 0;
  };
  struct Node {
    uint8_t type = 0;  // XNodeUnion tag
    std::vector<uint32_t> ids;  // the node table's id fields in slot order
  };

 private:
  uint32_t add(Value v);
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<Tensor> constants_;
  std::vector<uint32_t> inputs_, outputs_;
  uint32_t externs_ = 0;
};

}  // namespace ingot::exporters::executorch::xnnpack
