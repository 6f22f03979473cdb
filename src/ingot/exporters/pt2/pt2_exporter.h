// The torch.export backend: the shared tracing stages and the native verify, the program
// then written as a .pt2 archive (formats/pt2/writer.h) that torch.export.load reads.
// `export_format: "pt2"` (no keys beyond the native ones); `ingot export --format pt2`.
//
//   auto exporter = AutoExporter::from_format("pt2");
//   exporter->export_(*model, config)->save("model.pt2");
#pragma once

#include "ingot/exporters/exporter.h"

namespace ingot::exporters {

struct Pt2Config : NativeExportConfig {
  std::string export_format() const override { return "pt2"; }
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

 protected:
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig& config) override;
};

}  // namespace ingot::exporters
