// An in-memory ONNX model: the subset of onnx.proto that ingot writes and reads.
//
// The structs mirror the protobuf messages of the same names (ModelProto, GraphProto,
// NodeProto, ValueInfoProto, TypeProto.Tensor, TensorProto, AttributeProto,
// OperatorSetIdProto, StringStringEntryProto) field for field, so a reader of onnx.proto
// recognises them; writer.h turns them into protobuf bytes and reader.h back.
//
// Presence convention (what the writer emits): strings and bytes when non-empty, integers
// when non-zero, repeated fields when non-empty; the value field of an AttributeProto,
// the set alternative of a dimension and a tensor's data_type always. Reading our own
// bytes gives back an equal struct (operator==), and writing that gives the same bytes.
//
// Not represented (the reader rejects them with NotSupportedError when present):
// sequence/map/optional/sparse types, sparse tensors, local functions, training info,
// tensor segments, attribute references. Fields that do not change a model's meaning
// (metadata on nodes/values, denotations, quantization annotations) are skipped on read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ingot/core/dtype.h"

namespace ingot::exporters::onnx {

// TensorProto.DataType, values as in onnx.proto.
enum class DataType : int32_t {
  Undefined = 0,
  Float = 1,
  Uint8 = 2,
  Int8 = 3,
  Uint16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  Uint32 = 12,
  Uint64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  Uint4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  Uint2 = 25,
  Int2 = 26,
  Float6E2M3 = 27,
  Float6E3M2 = 28,
};
inline constexpr int32_t kMaxDataType = 28;

// "FLOAT", "BFLOAT16", ... as in onnx.proto; "UNKNOWN(n)" outside the enum.
std::string data_type_name(DataType t);
// ingot dtype <-> ONNX element type. to_data_type covers every ingot dtype; to_dtype
// throws NotSupportedError naming the ONNX type when ingot has no equivalent.
DataType to_data_type(DType t);
DType to_dtype(DataType t);
// Bytes per element of a fixed-size type (0 for String, sub-byte and Undefined types).
size_t data_type_size(DataType t);

// Immutable bytes: owned, or a read-only view of memory kept alive by `owner` (a
// Storage of a weight tensor, a mapped file). Copies share the same bytes, so weights
// put into a model are never duplicated. Equality compares contents.
class Bytes {
 public:
  Bytes() = default;
  explicit Bytes(std::string owned);
  static Bytes copy_of(const void* data, size_t size);
  static Bytes view(const void* data, size_t size, std::shared_ptr<const void> owner);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view str() const { return {reinterpret_cast<const char*>(data_), size_}; }
  // What keeps the bytes alive (null for empty Bytes).
  const std::shared_ptr<const void>& owner() const { return owner_; }

  friend bool operator==(const Bytes& a, const Bytes& b) { return a.str() == b.str(); }

 private:
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// StringStringEntryProto.
struct StringEntry {
  std::string key;
  std::string value;
  friend bool operator==(const StringEntry&, const StringEntry&) = default;
};

// TensorProto.DataLocation.
enum class DataLocation : int32_t { Default = 0, External = 1 };

// TensorProto. A tensor's payload is in exactly one place: raw_data (what ingot
// writes), one typed field (what other producers may write; float_data for FLOAT,
// int32_data for the <= 32-bit integer, bool and 16-bit float types, ...), or an
// external file named by external_data (keys "location", "offset", "length").
struct TensorProto {
  std::vector<int64_t> dims;
  DataType data_type = DataType::Undefined;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;
  std::vector<std::string> string_data;
  std::vector<int64_t> int64_data;
  std::string name;
  Bytes raw_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  std::string doc_string;
  std::vector<StringEntry> external_data;
  DataLocation data_location = DataLocation::Default;

  // The value of an external_data key ("" when absent).
  std::string external(std::string_view key) const;
  friend bool operator==(const TensorProto&, const TensorProto&) = default;
};

// TensorShapeProto.Dimension: a fixed size (dim_value), a named symbolic size
// (dim_param, e.g. "batch"), or neither (an unknown size).
struct Dim {
  std::variant<std::monostate, int64_t, std::string> value;

  Dim() = default;
  Dim(int64_t v) : value(v) {}                           // NOLINT: shapes read like {2, "seq"}
  Dim(int v) : value(int64_t(v)) {}                      // NOLINT
  Dim(std::string param) : value(std::move(param)) {}    // NOLINT
  Dim(const char* param) : value(std::string(param)) {}  // NOLINT

  bool is_value() const { return std::holds_alternative<int64_t>(value); }
  bool is_param() const { return std::holds_alternative<std::string>(value); }
  int64_t dim_value() const { return std::get<int64_t>(value); }
  const std::string& dim_param() const { return std::get<std::string>(value); }
  friend bool operator==(const Dim&, const Dim&) = default;
};

// TypeProto with its tensor_type alternative (the only one ingot uses). An absent
// shape means unknown rank; an empty one a scalar.
struct TensorType {
  DataType elem_type = DataType::Undefined;
  std::optional<std::vector<Dim>> shape;
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// ValueInfoProto: a graph input, output or annotated intermediate value.
struct ValueInfoProto {
  std::string name;
  std::optional<TensorType> type;
  std::string doc_string;
  friend bool operator==(const ValueInfoProto&, const ValueInfoProto&) = default;
};

struct GraphProto;

// A copyable owning pointer, so GraphProto can nest inside AttributeProto by value.
template <typename T>
class Box {
 public:
  Box() : p_(std::make_unique<T>()) {}
  Box(T v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT: implicit like a value
  Box(const Box& o) : p_(std::make_unique<T>(*o.p_)) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& o) {
    if (this != &o) p_ = std::make_unique<T>(*o.p_);
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  T& operator*() const { return *p_; }
  T* operator->() const { return p_.get(); }
  friend bool operator==(const Box& a, const Box& b) { return *a.p_ == *b.p_; }

 private:
  std::unique_ptr<T> p_;  // never null, except after a move
};

// AttributeProto.AttributeType (the kinds ingot represents).
enum class AttributeType : int32_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
};

std::string_view attribute_type_name(AttributeType t);

// AttributeProto. The value's alternative decides the attribute's type (the
// variant index equals AttributeType - 1). Strings are bytes in ONNX (UTF-8 by
// convention).
struct AttributeProto {
  using Value = std::variant<float, int64_t, std::string, TensorProto, Box<GraphProto>,
                             std::vector<float>, std::vector<int64_t>, std::vector<std::string>,
                             std::vector<TensorProto>, std::vector<GraphProto>>;
  std::string name;
  Value value;
  std::string doc_string;

  AttributeType type() const { return AttributeType(int32_t(value.index()) + 1); }
  friend bool operator==(const AttributeProto&, const AttributeProto&) = default;
};

// NodeProto. Empty strings in `input` mark omitted optional inputs.
struct NodeProto {
  std::vector<std::string> input;
  std::vector<std::string> output;
  std::string name;
  std::string op_type;
  std::vector<AttributeProto> attribute;
  std::string doc_string;
  std::string domain;  // "" is the default ONNX domain ("ai.onnx")

  // The attribute called `name`, or nullptr.
  const AttributeProto* find_attribute(std::string_view attr_name) const;
  friend bool operator==(const NodeProto&, const NodeProto&) = default;
};

// GraphProto. Nodes are in topological order. The main graph and subgraphs (If
// branches, Loop/Scan bodies) have the same form.
struct GraphProto {
  std::vector<NodeProto> node;
  std::string name;
  std::vector<TensorProto> initializer;
  std::string doc_string;
  std::vector<ValueInfoProto> input;
  std::vector<ValueInfoProto> output;
  std::vector<ValueInfoProto> value_info;
  friend bool operator==(const GraphProto&, const GraphProto&) = default;
};

// OperatorSetIdProto. domain "" is the default ONNX operator set.
struct OperatorSetId {
  std::string domain;
  int64_t version = 0;
  friend bool operator==(const OperatorSetId&, const OperatorSetId&) = default;
};

// ModelProto.
struct ModelProto {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  GraphProto graph;
  std::vector<OperatorSetId> opset_import;
  std::vector<StringEntry> metadata_props;

  // The version imported for `domain`, or 0 when it is not imported.
  int64_t opset_version(std::string_view opset_domain = "") const;
  friend bool operator==(const ModelProto&, const ModelProto&) = default;
};

}  // namespace ingot::exporters::onnx
