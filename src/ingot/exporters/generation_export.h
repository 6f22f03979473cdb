// How export_for_generation builds a GenerationExport's manifest (exporters/exporter.h):
// the step layout of each traced component and the pipeline of a vision-language or
// encoder-decoder model. GenerationExport::save writes the generation directory:
//
//   DIR/manifest.json     GenerationManifest::to_json(), written last (a directory with a
//                         manifest is complete)
//   DIR/<component><ext>  each artifact as its backend saves it (.ingot, .onnx [+ .data],
//                         openvino_model.xml + .bin, .pte)
//   DIR/genai_config.json etc. GenerationExport::client_files (a backend's own client's files)
//   DIR/tokenizer.json, tokenizer_config.json, generation_config.json, config.json,
//   chat_template.jinja, chat_template.json, preprocessor_config.json,
//   processor_config.json   copied from the model folder when present
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ingot/exporters/exporter.h"
#include "ingot/generation/manifest.h"
#include "ingot/runtime/generator/generator.h"

namespace ingot::exporters {

// The manifest of `components` exported from `model` with `options`: each component's
// file name and step layout (ExportArtifact::step_layout), the options, and the pipeline
// of a vision-language or encoder-decoder model (its decoder prompt read from
// options.model_folder's generation_config.json when set, as transformers' generate).
generation::GenerationManifest generation_manifest(const models::PretrainedModel& model,
                                                   const GenerationComponents& components,
                                                   const GenerationExportOptions& options);

// The step layout of a traced component: its first user inputs have `leading` roles (what
// the exporter passed before the state), the rest are the StaticCache's tensors
// (key_cache.N, value_cache.N, cache_position) and an encoder-decoder's cross-attention
// K/V (cross_key_cache.N, cross_value_cache.N), named by nn/ when the exporter built them.
generation::StepLayout step_layout_of(const ExportedProgram& program,
                                      const std::vector<generation::InputRole>& leading);

}  // namespace ingot::exporters
