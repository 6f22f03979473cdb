#include "ingot/exporters/onnx/model.h"

#include <array>
#include <cstring>

namespace ingot::exporters::onnx {

namespace {

constexpr std::array<std::string_view, kMaxDataType + 1> kDataTypeNames = {
    "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",    "INT16",
    "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",   "DOUBLE",
    "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16",  "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",      "FLOAT4E2M1",
    "FLOAT8E8M0",     "UINT2",      "INT2",           "FLOAT6E2M3", "FLOAT6E3M2"};

}  // namespace

std::string data_type_name(DataType t) {
  auto i = int32_t(t);
  if (i < 0 || i > kMaxDataType) return fmt::format("UNKNOWN({})", i);
  return std::string(kDataTypeNames[size_t(i)]);
}

DataType to_data_type(DType t) {
  switch (t) {
    case DType::Bool: return DataType::Bool;
    case DType::U8: return DataType::Uint8;
    case DType::I8: return DataType::Int8;
    case DType::I16: return DataType::Int16;
    case DType::I32: return DataType::Int32;
    case DType::I64: return DataType::Int64;
    case DType::F16: return DataType::Float16;
    case DType::BF16: return DataType::BFloat16;
    case DType::F32: return DataType::Float;
    case DType::F64: return DataType::Double;
  }
  INGOT_THROW(InternalError, "[onnx] dtype {} has no ONNX element type", int(t));
}

DType to_dtype(DataType t) {
  switch (t) {
    case DataType::Bool: return DType::Bool;
    case DataType::Uint8: return DType::U8;
    case DataType::Int8: return DType::I8;
    case DataType::Int16: return DType::I16;
    case DataType::Int32: return DType::I32;
    case DataType::Int64: return DType::I64;
    case DataType::Float16: return DType::F16;
    case DataType::BFloat16: return DType::BF16;
    case DataType::Float: return DType::F32;
    case DataType::Double: return DType::F64;
    default: break;
  }
  INGOT_THROW(NotSupportedError, "[onnx] element type {} has no ingot dtype", data_type_name(t));
}

size_t data_type_size(DataType t) {
  switch (t) {
    case DataType::Bool:
    case DataType::Uint8:
    case DataType::Int8:
    case DataType::Float8E4M3FN:
    case DataType::Float8E4M3FNUZ:
    case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ:
    case DataType::Float8E8M0: return 1;
    case DataType::Uint16:
    case DataType::Int16:
    case DataType::Float16:
    case DataType::BFloat16: return 2;
    case DataType::Float:
    case DataType::Int32:
    case DataType::Uint32: return 4;
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Double:
    case DataType::Complex64: return 8;
    case DataType::Complex128: return 16;
    default: return 0;
  }
}

Bytes::Bytes(std::string owned) {
  auto s = std::make_shared<const std::string>(std::move(owned));
  data_ = reinterpret_cast<const uint8_t*>(s->data());
  size_ = s->size();
  owner_ = std::move(s);
}

Bytes Bytes::copy_of(const void* data, size_t size) {
  return Bytes(std::string(static_cast<const char*>(data), size));
}

Bytes Bytes::view(const void* data, size_t size, std::shared_ptr<const void> owner) {
  Bytes b;
  b.owner_ = std::move(owner);
  b.data_ = static_cast<const uint8_t*>(data);
  b.size_ = size;
  return b;
}

std::string TensorProto::external(std::string_view key) const {
  for (const auto& e : external_data)
    if (e.key == key) return e.value;
  return "";
}

std::string_view attribute_type_name(AttributeType t) {
  switch (t) {
    case AttributeType::Undefined: return "UNDEFINED";
    case AttributeType::Float: return "FLOAT";
    case AttributeType::Int: return "INT";
    case AttributeType::String: return "STRING";
    case AttributeType::Tensor: return "TENSOR";
    case AttributeType::Graph: return "GRAPH";
    case AttributeType::Floats: return "FLOATS";
    case AttributeType::Ints: return "INTS";
    case AttributeType::Strings: return "STRINGS";
    case AttributeType::Tensors: return "TENSORS";
    case AttributeType::Graphs: return "GRAPHS";
  }
  return "UNKNOWN";
}

const AttributeProto* NodeProto::find_attribute(std::string_view attr_name) const {
  for (const auto& a : attribute)
    if (a.name == attr_name) return &a;
  return nullptr;
}

int64_t ModelProto::opset_version(std::string_view opset_domain) const {
  // "" and "ai.onnx" both name the default operator set.
  auto canonical = [](std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; };
  for (const auto& o : opset_import)
    if (canonical(o.domain) == canonical(opset_domain)) return o.version;
  return 0;
}

}  // namespace ingot::exporters::onnx
