// Serialises a Program (pte_program.h) into ExecuTorch's `.pte` format: the flatbuffer
// (built with FlatBufferBuilder's table API from the slots of pte_schema.h), the extended
// header, then the segments (segment 0: constant weights; segment 1: initial values of
// mutable state), every tensor aligned to pte::kTensorAlignment.
//
//   write_pte(program, "model.pte");   // temp file in the same directory, renamed at the end
//
// The flatbuffer holds metadata only; weight bytes are streamed from their tensors into
// the file once.
#pragma once

#include <string>

#include "ingot/exporters/executorch/pte_program.h"

namespace ingot::exporters::executorch {

// The flatbuffer of `program` with the extended header inserted (what precedes the
// segments), for `segment_data_size` bytes of segment data.
std::string serialize_program_header(const Program& program);

// Writes the whole .pte to `path` atomically (a failed write leaves no file at `path`).
void write_pte(const Program& program, const std::string& path);

}  // namespace ingot::exporters::executorch
