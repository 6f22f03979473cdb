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
//                          (every file models::ChatTemplate::from_folder reads), and
//   preprocessor_config.json, processor_config.json   (the image processor's settings)
//
// A vision-language or encoder-decoder model's manifest also has "pipeline" (pipeline_manifest
// below): how the components connect, the image token, the image input and where the text embedding
// table is (docs/generation.md).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ingot/exporters/exporter.h"

namespace ingot::exporters {

// Writes DIR as above. Every artifact must be of one format. `model` (optional) adds the
// pipeline of a vision-language model.
void save_generation_directory(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components,
    const std::string& dir, const std::string& model_folder, const std::string& architecture,
    const GenerationExportOptions& options, const models::PretrainedModel* model = nullptr);

// The manifest's "pipeline" of a models::VisionLanguageModel (null JSON for any other
// model): {"kind": "vision-language", "image_token_id", "tokens_per_image",
// "image_input": {channels, height, width}, "embed_tokens": {"component": "decode",
// "tensor": name}, "steps": [...]} where each step names a component, its inputs and
// outputs (or the merge between them).
// An encoder-decoder model's pipeline is {"kind": "encoder-decoder", "encoder_input":
// name, "decoder_prompt": [ids] (from `model_folder`'s generation_config.json / config.json,
// as transformers' generate), "steps": [encoder, cross_kv, decode]}.
nlohmann::json pipeline_manifest(
    const models::PretrainedModel& model,
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components,
    const std::string& model_folder = "");

// The programs of native components, for runtime::Generator.
std::map<std::string, ExportedProgram> programs_of(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components);

}  // namespace ingot::exporters
