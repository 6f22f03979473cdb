// The XNNPACK delegate's payload: what ExecuTorch's XnnpackBackend receives as a
// delegate's processed data, written by ingot with FlatBufferBuilder's table API (no
// generated code).
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
// dynamic tensor: the runtime reshapes the external values to the actual sizes and
// XNNPACK propagates them through the internal ones), constant index, external id, flags,
// id). External values are the delegate call's arguments: the runtime sorts the external
// ids of the inputs and of the outputs and binds argument k to the k-th (inputs first),
// so external id k is argument k. Internal values (external id XNN_INVALID_VALUE_ID) live
// in XNNPACK's own workspace: a fused partition's intermediate results never reach the
// ExecuTorch memory plan.
//
// XNNPACK is NHWC: its convolution reads [N, H, W, C] and a filter [O, kh, kw, C / groups]
// ([1, kh, kw, O] depthwise). The delegate boundary stays NCHW (ExecuTorch's contiguous
// tensors); the lowering puts static transposes around the convolution inside the graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/exporters/executorch/pte_program.h"

namespace ingot::exporters::executorch::xnnpack {

constexpr uint32_t kInvalidValueId = 0xFFFFFFFFu;  // XNN_INVALID_VALUE_ID
constexpr uint32_t kFlagExternalInput = 0x1;        // XNN_VALUE_FLAG_EXTERNAL_INPUT
constexpr uint32_t kFlagExternalOutput = 0x2;       // XNN_VALUE_FLAG_EXTERNAL_OUTPUT

// fb_xnnpack's XNodeUnion tags (schema.fbs order, NONE = 0) of the nodes ingot writes.
enum class NodeType : uint8_t {
  Add = 1,
  FullyConnected = 2,
  Softmax = 3,
  Sigmoid = 4,
  StaticTranspose = 5,
  Clamp = 6,
  Conv2d = 7,
  Div = 8,
  DepthwiseConv2d = 13,
  Multiply = 15,
  Subtract = 16,
  StaticReshape = 20,
  Negate = 27,
  BatchMatrixMultiply = 37,
  Gelu = 42,
  Tanh = 43,
};

// The spatial parameters of a 2-D convolution (XNNPACK's _XNNNodeConv fields).
struct Conv2dParams {
  uint32_t padding_h = 0, padding_w = 0, kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1,
           dilation_h = 1, dilation_w = 1, groups = 1, group_input_channels = 0,
           group_output_channels = 0;
};

// An XNNPACK subgraph being built: values by id (id_out), nodes in order.
class GraphBuilder {
 public:
  // A float32 external input: the delegate call's next input argument.
  uint32_t input(const std::vector<int64_t>& dims);
  // A float32 value made by a node of the graph (internal unless marked an output).
  uint32_t internal(const std::vector<int64_t>& dims);
  // Makes value `id` (made by a node) an external output: the delegate call's next output
  // argument.
  void mark_output(uint32_t id);
  // A float32 constant (its bytes copied into the payload's constant data); a 0-d tensor
  // is stored as [1] (it broadcasts the same).
  uint32_t constant(const Tensor& data);

  const std::vector<int64_t>& dims(uint32_t id) const { return values_.at(id).dims; }
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_outputs() const { return outputs_.size(); }

  // y = x W^T + b (linear): x [..., k], filter [n, k], bias [n].
  void fully_connected(uint32_t input, uint32_t filter, uint32_t bias, uint32_t output);
  // out = a @ b batched: a [b..., m, k], b [b..., k, n].
  void batch_matrix_multiply(uint32_t a, uint32_t b, uint32_t output);
  // out = a (op) b with NumPy broadcasting (Add, Subtract, Multiply, Div).
  void binary(NodeType op, uint32_t a, uint32_t b, uint32_t output);
  // out = op(x) elementwise (Sigmoid, Negate, Gelu, Tanh) or over the last dim (Softmax).
  void unary(NodeType op, uint32_t x, uint32_t output);
  // out = min(max(x, lo), hi).
  void clamp(uint32_t x, float lo, float hi, uint32_t output);
  // out = x permuted: out.dims[i] = x.dims[perm[i]].
  void transpose(uint32_t x, const std::vector<uint32_t>& perm, uint32_t output);
  // out = x with `shape` (one entry may be 0: inferred from the element count).
  void reshape(uint32_t x, const std::vector<uint32_t>& shape, uint32_t output);
  // NHWC convolution: input [N, H, W, C], filter [O, kh, kw, C / groups] (depthwise:
  // [1, kh, kw, O]), bias [O] or kInvalidValueId.
  void conv2d(bool depthwise, const Conv2dParams& p, uint32_t input, uint32_t filter,
              uint32_t bias, uint32_t output);

  // The payload: header and flatbuffer (head), then the constant data (the weights,
  // streamed from their tensors when the .pte is written).
  DelegateBlob finish() const;

 private:
  enum class Role { Internal, Input, Output, Constant };
  struct Value {
    std::vector<int64_t> dims;
    Role role = Role::Internal;
    uint32_t constant_index = 0;  // > 0: constants_[index - 1]
  };
  using Field = std::variant<uint32_t, std::vector<uint32_t>>;
  struct Node {
    NodeType type;
    std::vector<Field> fields;  // the node table's fields in slot order
    std::optional<std::pair<float, float>> min_max;  // XNode.output_min_max
  };

  uint32_t add(Value v);
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<Tensor> constants_;
  std::vector<uint32_t> inputs_, outputs_;  // value ids in argument order
};

}  // namespace ingot::exporters::executorch::xnnpack
