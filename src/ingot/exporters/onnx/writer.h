// Writes an in-memory ONNX model as protobuf bytes, written by ingot (no protoc).
//
// Output is canonical protobuf: fields in field-number order, packed where onnx.proto
// says [packed = true] and unpacked otherwise (proto2), so the onnx Python package
// parses a file and serialises it back to the same bytes (tools/onnx/check_and_run.py
// --roundtrip checks that). See model.h for which fields are emitted.
#pragma once

#include <cstddef>
#include <string>

#include "ingot/exporters/onnx/model.h"

namespace ingot::exporters::onnx {

// Protobuf limits one message to 2 GiB; larger models need external data.
inline constexpr size_t kMaxProtoBytes = (size_t(1) << 31) - 1;

// The serialised ModelProto. Throws ValueError when it would exceed kMaxProtoBytes
// (move the weights to external data: SaveOptions::external_data_file).
std::string serialize_model(const ModelProto& model);

struct SaveOptions {
  // File name, relative to the model's folder, that receives the bytes of large
  // initializers (e.g. "model.onnx.data"); empty keeps every tensor inside the model.
  std::string external_data_file;
  // Initializers with at least this many bytes of raw_data go to the external file.
  size_t external_threshold = 1024;
  // Offsets of external tensors are multiples of this (64: cache lines, SIMD loads);
  // tensors of at least 1 MiB are placed at multiples of large_alignment so a runtime
  // can mmap them (ONNX Runtime maps regions aligned to the allocation granularity).
  size_t alignment = 64;
  size_t large_alignment = 65536;
};

// One tensor's bytes placed in the external data file.
struct ExternalPiece {
  size_t offset = 0;
  Bytes bytes;
};

// Returns a copy of `model` in which every initializer (of the main graph and of every
// subgraph) with raw_data of at least options.external_threshold bytes refers to
// options.external_data_file (data_location EXTERNAL, keys location/offset/length)
// instead of holding its bytes; `pieces` receives where each one's bytes go. Weights
// are not copied (Bytes are shared).
ModelProto externalize_initializers(const ModelProto& model, const SaveOptions& options,
                                    std::vector<ExternalPiece>& pieces);

// Writes the model to `path` (and, with options.external_data_file, the data file next
// to it). Throws IoError naming the file when it cannot be written, ValueError when a
// tensor refers to external data that is not loaded (see reader.h load_external_data).
void save_model(const ModelProto& model, const std::string& path, const SaveOptions& options = {});

}  // namespace ingot::exporters::onnx
