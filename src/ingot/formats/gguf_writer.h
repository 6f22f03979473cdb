// Writing GGUF v3 files: metadata key/values and tensors in ggml's block formats, the
// inverse of gguf.h's reader (which reads every file this writes back unchanged).
//
//   GgufWriter w;
//   w.set("general.architecture", gguf_string("llama"));
//   w.add_tensor("token_embd.weight", {vocab, hidden}, GgmlType::F16, std::move(bytes));
//   w.add_tensor("output.weight", {vocab, hidden}, GgmlType::Q8_0, [&] { return pack(...); });
//   w.write("model.gguf");       // to model.gguf.tmp, renamed into place when complete
// A tensor given as a function is made while write() streams the file, so a model's
// converted weights are never all in memory at once.
//
// Layout: the header, the metadata in insertion order, the tensor infos in insertion
// order with offsets aligned to `general.alignment` (32), zero padding, the data section.
// Shapes are given in PyTorch order ([rows, cols]); the file stores ne reversed.
// This file knows nothing about models. Invariant: every tensor's byte count equals what
// its type and shape take, and its innermost dim is a whole number of blocks, so a file
// that write() completes always parses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ingot/formats/gguf.h"

namespace ingot::formats {

// Metadata values of each type GGUF stores.
GgufValue gguf_string(std::string s);
GgufValue gguf_u32(uint32_t v);
GgufValue gguf_i32(int32_t v);
GgufValue gguf_f32(float v);
GgufValue gguf_bool(bool v);
GgufValue gguf_string_array(std::vector<std::string> v);
GgufValue gguf_f32_array(const std::vector<float>& v);
GgufValue gguf_i32_array(const std::vector<int32_t>& v);

class GgufWriter {
 public:
  explicit GgufWriter(uint64_t alignment = 32);

  // Sets `key` (a key set twice is a ValueError naming it).
  void set(const std::string& key, GgufValue value);
  bool has(const std::string& key) const;
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }

  // Adds a tensor of PyTorch `shape` (1..4 dims) whose `data` holds its elements in ggml
  // `type`. ValueError naming it when the name repeats, the innermost dim is not a whole
  // number of the type's blocks or `data` has the wrong size.
  void add_tensor(const std::string& name, std::vector<int64_t> shape, GgmlType type,
                  std::vector<uint8_t> data);
  // The same, its bytes made by `make` during write() (a wrong size is a ValueError then).
  using MakeBytes = std::function<std::vector<uint8_t>()>;
  void add_tensor(const std::string& name, std::vector<int64_t> shape, GgmlType type,
                  MakeBytes make);

  // Writes the file: to `path`.tmp first, renamed to `path` only when complete (IoError
  // naming the path when it cannot be written; nothing is left behind then, also when a
  // tensor's `make` throws, whose error propagates).
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;  // PyTorch order
    GgmlType type;
    uint64_t nbytes = 0;
    std::vector<uint8_t> data;  // or
    MakeBytes make;
  };
  // Checks name, shape and type; returns the byte count the tensor takes.
  uint64_t check_tensor(const std::string& name, const std::vector<int64_t>& shape,
                        GgmlType type) const;

  uint64_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

// Bytes a tensor of `numel` elements (a whole number of blocks) takes in `type`.
uint64_t ggml_nbytes(GgmlType type, int64_t numel);

}  // namespace ingot::formats
