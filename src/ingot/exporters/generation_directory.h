// A generation directory: the components export_for_generation made, saved side by side
// with what a decode loop needs to run them (what `ingot export --task generation -o DIR`
// writes and `ingot generate DIR` / runtime::Generator::load read):
//
//   DIR/manifest.json     {"format": "ingot-generation", "version": 1, "export_format",
//                          "architecture", "components": {"decode": "decode.ingot", ...},
//                          "max_cache_len", "multi_token_decode", "dynamic_cache_len", "batch"}
//   DIR/<component><ext>  each artifact as its backend saves it (.ingot, .onnx [+ .data])
//   DIR/tokenizer.json, tokenizer_config.json, generation_config.json, config.json,
//   chat_template.jinja, chat_template.json   copied from the model folder when present
//                          (every file models::ChatTemplate::from_folder reads)
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ingot/exporters/exporter.h"

namespace ingot::exporters {

// Writes DIR as above. Every artifact must be of one format.
void save_generation_directory(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components,
    const std::string& dir, const std::string& model_folder, const std::string& architecture,
    const GenerationExportOptions& options);

// The programs of native components, for runtime::Generator.
std::map<std::string, ExportedProgram> programs_of(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components);

}  // namespace ingot::exporters
