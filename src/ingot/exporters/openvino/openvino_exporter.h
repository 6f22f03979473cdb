// The OpenVINO exporter (transformers.exporters' OpenVINOExporter, natively: no OpenVINO
// library at export time): the shared tracing stages, then decomposition to core ops,
// the OpenVINO translation table, IR fixes, weight compression and the IR v11 writer
// (stages listed in docs/exporters.md and marked in openvino_exporter.cpp).
//
//   OpenVINOExporter exporter;
//   OpenVINOConfig config;  config.dynamic = true;
//   auto model = exporter.export_(*model, inputs, config);
//   model->save("model.xml");                 // + model.bin
//
// A generation decode component is a stateful model in OpenVINO GenAI's layout (inputs
// input_ids, attention_mask, position_ids, beam_idx; output logits; the KV cache in
// ReadValue / Assign variables): see lowering.h and docs/openvino.md.
#pragma once

#include "ingot/exporters/exporter.h"
#include "ingot/exporters/openvino/ir.h"
#include "ingot/exporters/openvino/openvino_config.h"

namespace ingot::exporters {

class OpenVINOModel final : public ExportArtifact {
 public:
  std::string format() const override { return "openvino"; }
  std::string file_extension() const override { return ".xml"; }
  // Writes `path` (.xml) and the .bin next to it (temporary files renamed at the end).
  void save(const std::string& path) const override;
  // openvino_model.xml for the decode component (what OpenVINO GenAI loads),
  // openvino_<component>_model.xml for the others.
  std::string component_file(const std::string& component) const override;

  openvino::Model model;
  std::vector<std::string> input_names, output_names;
  std::vector<std::string> variables;  // stateful: the variable ids (cache tensor names)
};

class OpenVINOExporter final : public Exporter {
 public:
  std::string backend() const override { return "openvino"; }

 protected:
  // A generation directory holds one stateful openvino_model.xml (OpenVINO GenAI's
  // layout): the decode is multi-token.
  void adjust_generation_options(const ComponentConfigs&,
                                 GenerationExportOptions& g) const override {
    g.multi_token_decode = true;
  }
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig& config) override;
};

}  // namespace ingot::exporters
