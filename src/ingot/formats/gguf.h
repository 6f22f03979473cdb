// Reading GGUF files (llama.cpp's single-file checkpoints), versions 2 and 3, mapped.
//
// Layout (all little-endian):
//   "GGUF" u32 version  u64 n_tensors  u64 n_kv
//   n_kv x { string key, u32 value_type, value }        string = u64 length + bytes
//   n_tensors x { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//   padding to `general.alignment` (default 32), then the data section; each tensor's
//   offset is relative to it and a multiple of the alignment.
// ne[0] is the fastest-varying dim: a tensor's PyTorch shape is ne reversed.
//
// This file knows nothing about models. Every count, length and offset is checked
// against the file size before anything is allocated or read from it, so a malformed
// file is an IoError naming the file and the key or tensor at fault, never a crash, a
// hang or an allocation the file cannot back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ingot/core/storage.h"
#include "ingot/formats/ggml_types.h"

namespace ingot::formats {

// GGUF's metadata value types (the u32 after each key).
enum class GgufType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
const char* gguf_type_name(GgufType t);

// One metadata value. Scalars are widened (unsigned -> uint64_t, signed -> int64_t,
// floats -> double) with `type` keeping what the file stored; an array holds its
// elements (never nested deeper than the file allows: arrays of arrays are read too).
struct GgufValue {
  GgufType type = GgufType::U8;
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GgufValue>> value;
  GgufType element_type = GgufType::U8;  // arrays only

  bool is_array() const { return type == GgufType::Array; }
  bool is_string() const { return type == GgufType::String; }
  bool is_integer() const;
  bool is_float() const { return type == GgufType::F32 || type == GgufType::F64; }
  const std::vector<GgufValue>& array() const { return std::get<std::vector<GgufValue>>(value); }
  const std::string& str() const { return std::get<std::string>(value); }
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // ggml order: ne[0] innermost
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;  // into the data section
  uint64_t nbytes = 0;
  int64_t numel() const;
  // The PyTorch shape: ne reversed.
  std::vector<int64_t> shape() const;
};

// The parsed header of a whole file image.
struct GgufHeader {
  uint32_t version = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata;  // file order
  std::vector<GgufTensorInfo> tensors;                      // file order
  uint64_t alignment = 32;
  uint64_t data_start = 0;  // byte offset of the data section in the file
};

// Validates and parses a whole file image (`bytes` of `size`); `origin` names the file in
// errors. Pure function: the fuzz target drives it directly.
GgufHeader parse_gguf(const uint8_t* bytes, size_t size, const std::string& origin);

class GgufFile {
 public:
  // Maps and validates `path`; IoError naming it when unreadable or malformed.
  static GgufFile open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  uint32_t version() const { return header_.version; }
  uint64_t alignment() const { return header_.alignment; }
  const GgufHeader& header() const { return header_; }
  const std::vector<GgufTensorInfo>& tensors() const { return header_.tensors; }

  // Metadata by key (nullptr when absent).
  const GgufValue* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  // Typed reads; IoError naming the file and the key when absent or of another type.
  std::string get_string(const std::string& key) const;
  std::optional<std::string> get_optional_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;  // any integer type
  std::optional<int64_t> get_optional_int(const std::string& key) const;
  double get_double(const std::string& key) const;  // any float or integer type
  std::optional<double> get_optional_double(const std::string& key) const;
  std::optional<bool> get_optional_bool(const std::string& key) const;
  std::vector<std::string> get_string_array(const std::string& key) const;
  std::vector<double> get_number_array(const std::string& key) const;  // floats or integers

  // Tensor info by name; IoError naming the file when absent.
  const GgufTensorInfo& tensor_info(const std::string& name) const;
  bool contains(const std::string& name) const { return by_name_.contains(name); }
  // The tensor's raw bytes in the mapping (nbytes of them), and a Storage over them that
  // keeps the mapping alive.
  const uint8_t* tensor_data(const GgufTensorInfo& info) const;
  std::shared_ptr<Storage> tensor_storage(const GgufTensorInfo& info) const;

 private:
  std::shared_ptr<MappedFile> file_;
  GgufHeader header_;
  std::map<std::string, size_t> by_key_;
  std::map<std::string, size_t> by_name_;
};

}  // namespace ingot::formats
