// Saving and loading an ExportedProgram as a `.ingot` archive (torch.export.save / load,
// natively). The format is specified in docs/ingot_format.md: a 64-byte header, the
// program as JSON, then the raw bytes of every state, constant and example-input tensor,
// each 64-byte aligned.
//
//   ingot::save(ep, "model.ingot");
//   ExportedProgram loaded = ingot::load("model.ingot");   // weights mapped, not copied
//
// Round trip is exact: the loaded program prints the same, its graph is structurally
// equal, its tensors hold the same bytes. Loading checks every header field, offset and
// length, the JSON's structure and types, that every op is registered and every value id
// and symbol is defined, then runs ExportedProgram::verify(); any problem is an IoError
// (NotSupportedError for an op this build lacks) naming the file and what is wrong.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ingot/ir/program.h"

namespace ingot {

// Writes `program` to `path` (through a temporary file renamed into place, so a failed
// save never leaves a partial archive under that name). Throws IoError naming the path.
void save(const ExportedProgram& program, const std::string& path);

// Reads an archive. State, constants and example inputs are read-only views of the
// mapped file (Storage::is_mapped()), which stays mapped while any of them lives.
ExportedProgram load(const std::string& path);

// The archive bytes save() would write (for tests and tools).
std::string save_to_bytes(const ExportedProgram& program);

// Reads an archive held in memory: tensors are read-only views of [data, data + size),
// which `owner` keeps alive. `origin` names the archive in error messages.
ExportedProgram load_from_bytes(const uint8_t* data, size_t size, std::shared_ptr<void> owner,
                                const std::string& origin);

}  // namespace ingot
