// The ONNX exporter (transformers.exporters' OnnxExporter, natively): the shared tracing
// stages, then decomposition to core ops, the translation table, IR fixes, the optional
// optimiser and the writer (stages listed in docs/exporters.md and marked in
// onnx_exporter.cpp).
//
//   OnnxExporter exporter;
//   OnnxConfig config;  config.dynamic = true;
//   auto program = exporter.export_(*model, inputs, config);
//   program->save("model.onnx");            // + model.onnx.data when weights are large
//
// A mutated user input (the static KV cache of a decode graph) becomes the pair
// input.<name> / output.<name> (OnnxProgram::inplace_pairs) for ONNX Runtime IO binding.
// With OnnxConfig::genai a generation export is ONNX Runtime GenAI's directory instead:
// a growing past/present decode step and genai_config.json.
#pragma once

#include "ingot/exporters/exporter.h"
#include "ingot/exporters/onnx/model.h"
#include "ingot/exporters/onnx/onnx_config.h"
#include "ingot/exporters/onnx/writer.h"

namespace ingot::exporters {

class OnnxProgram final : public ExportArtifact {
 public:
  std::string format() const override { return "onnx"; }
  std::string file_extension() const override { return ".onnx"; }
  // Writes the model to `path`; initializers go to `<file name>.data` next to it when
  // the config asks ("always"), or ("auto") when the weights exceed 1 GiB.
  void save(const std::string& path) const override;
  // The SaveOptions save() uses for `path`.
  onnx::SaveOptions save_options(const std::string& path) const;

  onnx::ModelProto model;
  std::vector<std::pair<std::string, std::string>> inplace_pairs;  // (input.<n>, output.<n>)
  std::vector<std::string> input_names, output_names;
  std::string external_data = "auto";
  int64_t external_threshold = 1024;
};

class OnnxExporter final : public Exporter {
 public:
  std::string backend() const override { return "onnx"; }

 protected:
  // OnnxConfig::genai: the decode component in the growing past/present cache layout
  // (ONNX Runtime GenAI's, past_present_share_buffer false) ...
  void adjust_generation_options(const ComponentConfigs& configs,
                                 GenerationExportOptions& g) const override;
  // ... and genai_config.json next to it (onnx/genai_config.h); needs g.model_folder.
  void add_generation_components(models::PretrainedModel& model, const ComponentConfigs& configs,
                                 const GenerationExportOptions& g, GenerationExport& out) override;
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig& config) override;
};

}  // namespace ingot::exporters
