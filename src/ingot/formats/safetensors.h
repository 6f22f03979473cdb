// Reading and writing the safetensors format, zero-copy.
//
// Layout: u64 little-endian header length N, N bytes of JSON
//   {"__metadata__": {str: str}, "<name>": {"dtype": "F32", "shape": [..],
//    "data_offsets": [begin, end]}, ...}
// then the data buffer; offsets are relative to its start. A file is mapped read-only
// and each tensor is a view of the mapping (no copy) when its address is aligned for
// its dtype. Every header field is validated: a bad file is an IoError naming the file
// and the tensor, never a crash.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::formats {

struct SafetensorsEntry {
  DType dtype;
  IntShape shape;
  size_t begin = 0;  // byte offsets into the data buffer
  size_t end = 0;
};

// The parsed header of a safetensors file: entries by name and free-form metadata.
struct SafetensorsHeader {
  std::map<std::string, SafetensorsEntry> entries;
  std::map<std::string, std::string> metadata;
  size_t data_start = 0;  // byte offset of the data buffer in the file
};

// Validates and parses the header of a whole file image (`bytes` of `size`). `origin`
// names the file in errors. Pure function: the fuzz target drives it directly.
SafetensorsHeader parse_safetensors(const uint8_t* bytes, size_t size, const std::string& origin);

class SafetensorsFile {
 public:
  // Maps and validates the file; throws IoError naming it.
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  const std::map<std::string, SafetensorsEntry>& entries() const { return header_.entries; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  bool contains(const std::string& name) const { return header_.entries.contains(name); }
  // A read-only view of the mapped data (a copy only if the data is misaligned).
  // Throws IoError naming the file when the tensor is absent.
  Tensor tensor(const std::string& name) const;

 private:
  std::shared_ptr<MappedFile> file_;
  SafetensorsHeader header_;
};

// Writes tensors (any strides; stored contiguous) with optional metadata. Throws
// IoError naming the path on failure.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace ingot::formats
