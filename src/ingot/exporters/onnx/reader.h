// Reads ONNX protobuf bytes into the in-memory model of model.h.
//
// Malformed input (truncated or overlong fields, lengths past the end, wrong wire types,
// out-of-range enums, attributes whose value does not match their type, nesting deeper
// than kMaxGraphDepth) is an IoError naming the source and the field path, e.g.
// "[onnx.load] m.onnx: graph.node[2].attribute[0] (then_branch): ...". Valid protobuf
// that uses ONNX features outside model.h's subset is a NotSupportedError naming the
// field. Unknown fields are skipped, as protobuf does. The reader never reads outside
// its buffer, so it is safe on untrusted files (fuzz/onnx_reader_fuzz.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ingot/exporters/onnx/model.h"

namespace ingot::exporters::onnx {

// Subgraphs (If/Loop/Scan bodies) nested deeper than this are rejected.
inline constexpr int kMaxGraphDepth = 64;

// Parses a serialised ModelProto; `origin` names it in errors. With keep_alive, every
// raw_data becomes a view into [data, data + size), which keep_alive must keep valid
// (no copy of the weights); without it raw_data is copied.
ModelProto parse_model(const uint8_t* data, size_t size, const std::string& origin,
                       std::shared_ptr<const void> keep_alive = nullptr);

// Reads a .onnx file through a read-only mmap: raw_data fields are views of the mapping.
// With load_external, tensors stored as external data get their bytes too (see
// load_external_data); otherwise they keep only their references.
ModelProto load_model(const std::string& path, bool load_external = true);

// Gives every tensor stored as external data (initializers of every graph, tensor
// attributes) its bytes: each data file, named by the tensor's "location" relative to
// base_dir, is mapped once and raw_data becomes a view of it. The tensor then is an
// ordinary DEFAULT-location tensor. Throws IoError when a location escapes base_dir
// (absolute or containing ".."), a file is missing, or offset/length lie outside it or
// disagree with the tensor's dims and type.
void load_external_data(ModelProto& model, const std::string& base_dir);

}  // namespace ingot::exporters::onnx
