// The torch.export backend: the shared tracing stages and the native verify, the program
// then written as a .pt2 archive (formats/pt2/writer.h) that torch.export.load reads.
// `export_format: "pt2"`; `ingot export --format pt2`.
//
// The archive is called the way transformers' own torch.export is:
// `ep.module()(input_ids=..., attention_mask=...)`. The optional inputs are left out of
// the trace, so the graph computes them as transformers' forward does (position_ids an
// arange over the sequence, token_type_ids zeros); the key "inputs" (a list of
// input_ids, attention_mask, position_ids, token_type_ids) makes some of them keyword
// arguments of the archive again.
//
//   auto exporter = AutoExporter::from_format("pt2");
//   exporter->export_(*model, config)->save("model.pt2");
#pragma once

#include "ingot/exporters/exporter.h"

namespace ingot::exporters {

struct Pt2Config : NativeExportConfig {
  // The model inputs the archive takes (the others are computed in the graph).
  std::vector<std::string> inputs = {"input_ids", "attention_mask"};

  std::string export_format() const override { return "pt2"; }
  std::string to_json() const override;
  std::unique_ptr<NativeExportConfig> clone() const override {
    return std::make_unique<Pt2Config>(*this);
  }
};

class Pt2Artifact final : public ExportArtifact {
 public:
  std::string format() const override { return "pt2"; }
  std::string file_extension() const override { return ".pt2"; }
  void save(const std::string& path) const override;
};

class Pt2Exporter final : public Exporter {
 public:
  std::string backend() const override { return "pt2"; }
  models::ModelInputs example_inputs(const models::PretrainedModel& model,
                                     const NativeExportConfig& config) const override;

 protected:
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig& config) override;
};

}  // namespace ingot::exporters
