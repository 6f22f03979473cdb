#include "ingot/cli/program_file.h"

#include <cstdio>
#include <filesystem>

#include "ingot/exporters/exporter.h"
#include "ingot/formats/pt2/reader.h"
#include "ingot/formats/serialize.h"

namespace ingot::cli {

bool is_program_file(const std::string& path) { return std::filesystem::is_regular_file(path); }

ExportedProgram load_program_file(const std::string& path, std::string* header) {
  if (!pt2::looks_like_pt2(path)) {
    if (header) *header = "ingot archive";
    return load(path);
  }
  pt2::Pt2Info info;
  ExportedProgram ep = pt2::load_pt2(path, &info);
  if (header) {
    *header = fmt::format("torch.export archive: torch {}, schema {}.{}, {} dialect, {} records",
                          info.torch_version.empty() ? "?" : info.torch_version, info.schema_major,
                          info.schema_minor, info.dialect.empty() ? "unnamed" : info.dialect,
                          info.records.size());
  }
  return ep;
}

int export_program_file(const std::string& path, const exporters::NativeExportConfig& config,
                        const std::string& output) {
  std::string header;
  ExportedProgram ep = load_program_file(path, &header);
  auto exporter = exporters::AutoExporter::from_config(config);
  std::unique_ptr<exporters::ExportArtifact> artifact = exporter->lower(std::move(ep), config);
  artifact->save(output);
  std::printf("exported %s (%s; %s): %zu nodes, %zu inputs -> %s\n", path.c_str(), header.c_str(),
              artifact->format().c_str(), artifact->program.graph->nodes().size(),
              artifact->program.graph->inputs.size(), output.c_str());
  for (const std::string& note : artifact->notes) std::printf("  %s\n", note.c_str());
  return 0;
}

}  // namespace ingot::cli
