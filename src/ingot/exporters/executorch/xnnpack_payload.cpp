#include "ingot/exporters/executorch/xnnpack_payload.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>

#include "ingot/core/error.h"
#include "ingot/exporters/executorch/pte_schema.h"
#include "ingot/ops/functional/views.h"

namespace ingot::exporters::executorch::xnnpack {

namespace {

using pte::slot;
using Table = flatbuffers::Offset<void>;

// fb_xnnpack's enums and union tags (schema.fbs order; NONE = 0).
constexpr int16_t kFp32 = 1;          // XNNDatatype.xnn_datatype_fp32
constexpr uint8_t kXValueTensor = 1;  // XValueUnion.XNNTensorValue
constexpr uint64_t kAlignment = 16;   // CONSTANT_TENSOR_ALIGNMENT
constexpr uint32_t kHeaderLength = 30;  // XNNHeader.EXPECTED_LENGTH
constexpr uint32_t kPaddedHeader = 32;

// Field slots.
namespace TensorValue {
constexpr int datatype = 0, num_dims = 1, dims = 2, constant_buffer_idx = 3, external_id = 4,
              flags = 5, id_out = 6;
}
namespace XValue {
constexpr int union_type = 0, union_value = 1;
}
namespace XNode {
constexpr int union_type = 0, union_value = 1, debug_handle = 2, output_min_max = 3;
}
namespace OutputMinMax {
constexpr int output_min = 0, output_max = 1;
}
namespace ConstantDataOffset {
constexpr int offset = 0, size = 1;
}
namespace XNNGraph {
constexpr int version = 0, xnodes = 1, xvalues = 2, num_externs = 3, input_ids = 4,
              output_ids = 5, constant_data = 8;
}

uint64_t align_up(uint64_t n, uint64_t a) {
  return (n + a - 1) / a * a;
}

template <typename T>
void put(std::string& out, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out[at + i] = char((uint64_t(v) >> (8 * i)) & 0xFF);
}

}  // namespace

uint32_t GraphBuilder::add(Value v) {
  values_.push_back(std::move(v));
  return uint32_t(values_.size() - 1);
}

uint32_t GraphBuilder::input(const std::vector<int64_t>& dims) {
  const uint32_t id = add({dims, Role::Input, 0});
  inputs_.push_back(id);
  return id;
}

uint32_t GraphBuilder::internal(const std::vector<int64_t>& dims) {
  return add({dims, Role::Internal, 0});
}

void GraphBuilder::mark_output(uint32_t id) {
  Value& v = values_.at(id);
  INGOT_CHECK(v.role == Role::Internal, InternalError,
              "[xnnpack] value {} is not a node result and cannot be an output", id);
  v.role = Role::Output;
  outputs_.push_back(id);
}

uint32_t GraphBuilder::constant(const Tensor& data) {
  INGOT_CHECK(data.dtype() == DType::F32, InternalError,
              "[xnnpack] only float32 constants are lowered, got {}", dtype_name(data.dtype()));
  constants_.push_back(contiguous(data));
  std::vector<int64_t> dims = data.sizes();
  if (dims.empty()) dims = {1};
  return add({dims, Role::Constant, uint32_t(constants_.size())});
}

void GraphBuilder::fully_connected(uint32_t input, uint32_t filter, uint32_t bias,
                                   uint32_t output) {
  // XNNFullyConnected: input1_id, filter_id, bias_id, output_id, flags (0: filter [n, k]).
  nodes_.push_back({NodeType::FullyConnected, {input, filter, bias, output, 0u}, {}});
}

void GraphBuilder::batch_matrix_multiply(uint32_t a, uint32_t b, uint32_t output) {
  // _XNNNode2x1: input1_id, input2_id, output_id, flags.
  nodes_.push_back({NodeType::BatchMatrixMultiply, {a, b, output, 0u}, {}});
}

void GraphBuilder::binary(NodeType op, uint32_t a, uint32_t b, uint32_t output) {
  nodes_.push_back({op, {a, b, output, 0u}, {}});
}

void GraphBuilder::unary(NodeType op, uint32_t x, uint32_t output) {
  // _XNNNode1x1: input_id, output_id, flags.
  nodes_.push_back({op, {x, output, 0u}, {}});
}

void GraphBuilder::clamp(uint32_t x, float lo, float hi, uint32_t output) {
  // XNNClamp is a _XNNNode1x1; its bounds are the XNode's output_min_max.
  nodes_.push_back({NodeType::Clamp, {x, output, 0u}, std::pair{lo, hi}});
}

void GraphBuilder::transpose(uint32_t x, const std::vector<uint32_t>& perm, uint32_t output) {
  // XNNStaticTranspose: num_dims, perm, input_id, output_id, flags.
  nodes_.push_back({NodeType::StaticTranspose, {uint32_t(perm.size()), perm, x, output, 0u}, {}});
}

void GraphBuilder::reshape(uint32_t x, const std::vector<uint32_t>& shape, uint32_t output) {
  // XNNStaticReshape: num_dims, new_shape, input_id, output_id, flags.
  nodes_.push_back({NodeType::StaticReshape, {uint32_t(shape.size()), shape, x, output, 0u}, {}});
}

void GraphBuilder::conv2d(bool depthwise, const Conv2dParams& p, uint32_t input, uint32_t filter,
                          uint32_t bias, uint32_t output) {
  // _XNNNodeConv: padding top, right, bottom, left, kernel h, w, subsampling h, w, dilation
  // h, w, group input / output channels, groups, adjustment h, w, input1, filter, bias,
  // output, flags.
  nodes_.push_back({depthwise ? NodeType::DepthwiseConv2d : NodeType::Conv2d,
                    {p.padding_h, p.padding_w, p.padding_h, p.padding_w, p.kernel_h, p.kernel_w,
                     p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.group_input_channels,
                     p.group_output_channels, p.groups, 0u, 0u, input, filter, bias, output, 0u},
                    {}});
}

DelegateBlob GraphBuilder::finish() const {
  // Where each constant goes in the constant data section.
  std::vector<uint64_t> offsets{0};
  uint64_t data_size = 0;
  for (const Tensor& t : constants_) {
    offsets.push_back(data_size);
    data_size = align_up(data_size + t.nbytes(), kAlignment);
  }
  // External ids: the inputs 0.., then the outputs (the delegate call's argument order).
  std::vector<uint32_t> external(values_.size(), kInvalidValueId);
  for (size_t i = 0; i < inputs_.size(); ++i) external[inputs_[i]] = uint32_t(i);
  for (size_t i = 0; i < outputs_.size(); ++i)
    external[outputs_[i]] = uint32_t(inputs_.size() + i);
  // Values listed with the external ones first, in external id order.
  std::vector<uint32_t> order(inputs_);
  order.insert(order.end(), outputs_.begin(), outputs_.end());
  for (uint32_t i = 0; i < values_.size(); ++i)
    if (external[i] == kInvalidValueId) order.push_back(i);

  flatbuffers::FlatBufferBuilder b;
  b.ForceDefaults(true);  // every field written (ids 0, external ids, offsets 0)
  std::vector<Table> values;
  for (uint32_t i : order) {
    const Value& v = values_[i];
    std::vector<uint32_t> dims(v.dims.begin(), v.dims.end());
    const uint32_t flags = v.role == Role::Input    ? kFlagExternalInput
                           : v.role == Role::Output ? kFlagExternalOutput
                                                    : 0u;
    auto dims_vec = b.CreateVector(dims);
    auto s = b.StartTable();
    b.AddElement<int16_t>(slot(TensorValue::datatype), kFp32, 0);
    b.AddElement<uint32_t>(slot(TensorValue::num_dims), uint32_t(dims.size()), 0);
    b.AddOffset(slot(TensorValue::dims), dims_vec);
    b.AddElement<uint32_t>(slot(TensorValue::constant_buffer_idx), v.constant_index, 0);
    b.AddElement<uint32_t>(slot(TensorValue::external_id), external[i], 0);
    b.AddElement<uint32_t>(slot(TensorValue::flags), flags, 0);
    b.AddElement<uint32_t>(slot(TensorValue::id_out), i, 0);
    Table tensor(b.EndTable(s));
    auto sv = b.StartTable();
    b.AddElement<uint8_t>(slot(XValue::union_type), kXValueTensor, 0);
    b.AddOffset(slot(XValue::union_value), tensor);
    values.push_back(Table(b.EndTable(sv)));
  }
  std::vector<Table> nodes;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    std::vector<flatbuffers::Offset<flatbuffers::Vector<uint32_t>>> vectors(n.fields.size());
    for (size_t f = 0; f < n.fields.size(); ++f)
      if (const auto* v = std::get_if<std::vector<uint32_t>>(&n.fields[f]))
        vectors[f] = b.CreateVector(*v);
    Table min_max;
    if (n.min_max) {
      auto s = b.StartTable();
      b.AddElement<float>(slot(OutputMinMax::output_min), n.min_max->first, 0.0f);
      b.AddElement<float>(slot(OutputMinMax::output_max), n.min_max->second, 0.0f);
      min_max = Table(b.EndTable(s));
    }
    auto s = b.StartTable();
    for (size_t f = 0; f < n.fields.size(); ++f) {
      if (const auto* v = std::get_if<uint32_t>(&n.fields[f]))
        b.AddElement<uint32_t>(slot(int(f)), *v, 0);
      else
        b.AddOffset(slot(int(f)), vectors[f]);
    }
    Table body(b.EndTable(s));
    auto sn = b.StartTable();
    b.AddElement<uint8_t>(slot(XNode::union_type), uint8_t(n.type), 0);
    b.AddOffset(slot(XNode::union_value), body);
    b.AddElement<uint32_t>(slot(XNode::debug_handle), uint32_t(i), 0);
    if (n.min_max) b.AddOffset(slot(XNode::output_min_max), min_max);
    nodes.push_back(Table(b.EndTable(sn)));
  }
  std::vector<Table> constant_data;
  for (size_t i = 0; i < offsets.size(); ++i) {
    auto s = b.StartTable();
    b.AddElement<uint64_t>(slot(ConstantDataOffset::offset), offsets[i], 0);
    b.AddElement<uint64_t>(slot(ConstantDataOffset::size),
                           i == 0 ? 0 : constants_[i - 1].nbytes(), 0);
    constant_data.push_back(Table(b.EndTable(s)));
  }
  std::vector<uint32_t> input_ids, output_ids;  // external ids
  for (uint32_t id : inputs_) input_ids.push_back(external[id]);
  for (uint32_t id : outputs_) output_ids.push_back(external[id]);
  auto version = b.CreateString("0");
  auto nodes_vec = b.CreateVector(nodes);
  auto values_vec = b.CreateVector(values);
  auto in_vec = b.CreateVector(input_ids);
  auto out_vec = b.CreateVector(output_ids);
  auto cd_vec = b.CreateVector(constant_data);
  auto s = b.StartTable();
  b.AddOffset(slot(XNNGraph::version), version);
  b.AddOffset(slot(XNNGraph::xnodes), nodes_vec);
  b.AddOffset(slot(XNNGraph::xvalues), values_vec);
  b.AddElement<uint32_t>(slot(XNNGraph::num_externs),
                         uint32_t(inputs_.size() + outputs_.size()), 0);
  b.AddOffset(slot(XNNGraph::input_ids), in_vec);
  b.AddOffset(slot(XNNGraph::output_ids), out_vec);
  b.AddOffset(slot(XNNGraph::constant_data), cd_vec);
  b.Finish(flatbuffers::Offset<void>(b.EndTable(s)), "XN01");

  const uint64_t fb_size = b.GetSize();
  const uint64_t cd_offset = kPaddedHeader + align_up(fb_size, kAlignment);
  std::string out(cd_offset, '\0');
  std::memcpy(out.data() + 4, "XH00", 4);
  put<uint16_t>(out, 8, uint16_t(kHeaderLength));
  put<uint32_t>(out, 10, kPaddedHeader);
  put<uint32_t>(out, 14, uint32_t(fb_size));
  put<uint32_t>(out, 18, uint32_t(cd_offset));
  put<uint64_t>(out, 22, data_size);
  std::memcpy(out.data() + kPaddedHeader, b.GetBufferPointer(), fb_size);
  DelegateBlob blob;
  blob.head = std::move(out);
  blob.tensors = constants_;
  blob.tensor_offsets.assign(offsets.begin() + 1, offsets.end());
  blob.size = cd_offset + data_size;
  return blob;
}

}  // namespace ingot::exporters::executorch::xnnpack
