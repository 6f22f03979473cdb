// Reading a torch.export archive (.pt2, written by torch.export.save) into an ingot
// ExportedProgram, without libtorch.
//
//   ExportedProgram ep = ingot::pt2::load_pt2("model.pt2");
//   runtime::ProgramModule mod(ep);                 // run it natively
//   ingot::save(ep, "model.ingot");                 // or re-export it (ONNX, OpenVINO, ...)
//
// The archive (docs/pt2.md): a stored ZIP with `archive_format` ("pt2"),
// `archive_version`, `byteorder`, `models/model.json` (the serialized ExportedProgram:
// graph, signature, range constraints, module call graph with the pytree specs) and
// `data/weights/*`, `data/constants/*` (raw tensor bytes, each described by an entry of
// the *_config.json next to them).
//
// torch's graph is re-traced through ingot's export tracer: each node calls the ingot
// registry op of the same ATen name (aten_ops.h), so the result is an ordinary ingot
// program — functional, verified, with symbols named and ranged as torch wrote them,
// buffer updates as BUFFER_MUTATION outputs whichever dialect the archive holds, and
// the input / output pytrees of the archive (dict keys, ModelOutput fields, constant
// inputs). Weights are views of the mapped file (the records are 64-byte aligned).
//
// Errors: every problem is an IoError ("[pt2] 'model.pt2': ...") naming the record, the
// JSON path or the tensor; ops ingot lacks are one NotSupportedError listing each with
// its count; an unknown schema version names it and the supported ones.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ingot/ir/program.h"

namespace ingot::pt2 {

// The schema majors this reader understands (torch 2.12 - 2.15 write 8.x).
inline constexpr int kSchemaMajor = 8;
// The archive_version values accepted.
inline constexpr int kArchiveVersion = 0;

struct Pt2Info {
  std::string torch_version;  // "2.15.0+cu132"
  int schema_major = 0, schema_minor = 0;
  std::string dialect;  // verifiers[0]: "TRAINING", "ATEN" ("" when absent)
  std::string archive_version;
  std::vector<std::string> records;  // record names, without the archive's folder prefix
};

// True when `path` starts like a ZIP file (what .pt2 archives are).
bool looks_like_pt2(const std::string& path);

ExportedProgram load_pt2(const std::string& path, Pt2Info* info = nullptr);

// The same from memory: tensors view [data, data + size), kept alive by `owner`.
ExportedProgram load_pt2_from_bytes(const uint8_t* data, size_t size, std::shared_ptr<void> owner,
                                    const std::string& origin, Pt2Info* info = nullptr);

}  // namespace ingot::pt2
