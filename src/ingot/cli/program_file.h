// Program files the commands accept: an .ingot archive, or a torch.export .pt2 archive
// (read by formats/pt2, re-traced into an ingot program).
#pragma once

#include <string>

#include "ingot/exporters/config.h"
#include "ingot/ir/program.h"

namespace ingot::cli {

// True when `path` is a file holding a program (.ingot or .pt2), not a model folder.
bool is_program_file(const std::string& path);
// Loads either kind; `header` (when given) receives a one-line description of the
// source ("torch.export archive: torch 2.15.0, schema 8.20, TRAINING dialect").
ExportedProgram load_program_file(const std::string& path, std::string* header = nullptr);
// `ingot export model.pt2 --format F -o OUT`: the program lowered by F's exporter.
int export_program_file(const std::string& path, const exporters::NativeExportConfig& config,
                        const std::string& output);

}  // namespace ingot::cli
