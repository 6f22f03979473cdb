#include "ingot/exporters/pt2/pt2_exporter.h"

#include "ingot/formats/pt2/writer.h"

namespace ingot::exporters {

void Pt2Artifact::save(const std::string& path) const {
  pt2::save_pt2(program, path);
}

std::unique_ptr<ExportArtifact> Pt2Exporter::finish(ExportedProgram program,
                                                    std::vector<std::string> notes,
                                                    const NativeExportConfig&) {
  // ── Stage 7 (pt2): verify the program; the artifact saves as a .pt2 archive ──
  program.verify();
  auto a = std::make_unique<Pt2Artifact>();
  a->program = std::move(program);
  a->notes = std::move(notes);
  return a;
}

namespace {
const bool kRegistered = [] {
  register_config_format("pt2", {{},
                                 [] { return std::make_unique<Pt2Config>(); },
                                 [](const auto&, NativeExportConfig&, const std::string&) {}});
  register_exporter("pt2", [] { return std::make_unique<Pt2Exporter>(); });
  return true;
}();
}  // namespace

}  // namespace ingot::exporters
