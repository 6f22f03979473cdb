#include "ingot/exporters/generation_directory.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace ingot::exporters {

void save_generation_directory(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components,
    const std::string& dir, const std::string& model_folder, const std::string& architecture,
    const GenerationExportOptions& o) {
  namespace fs = std::filesystem;
  INGOT_CHECK(!components.empty(), ValueError, "[save_generation_directory] no components to save");
  const std::string format = components.begin()->second->format();
  nlohmann::json manifest = {{"format", "ingot-generation"},
                             {"version", 1},
                             {"export_format", format},
                             {"architecture", architecture},
                             {"max_cache_len", o.max_cache_len},
                             {"multi_token_decode", o.multi_token_decode},
                             {"dynamic_cache_len", o.dynamic_cache_len},
                             {"batch", o.batch}};
  fs::create_directories(dir);
  for (const auto& [name, artifact] : components) {
    INGOT_CHECK(artifact->format() == format, ValueError,
                "[save_generation_directory] component '{}' is {}, the others {}", name,
                artifact->format(), format);
    const std::string file = artifact->component_file(name);
    artifact->save((fs::path(dir) / file).string());
    manifest["components"][name] = file;
  }
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json",
                        "config.json", "chat_template.jinja", "chat_template.json"}) {
    fs::path src = fs::path(model_folder) / f;
    if (fs::exists(src))
      fs::copy_file(src, fs::path(dir) / f, fs::copy_options::overwrite_existing);
  }
  // The manifest last: a directory with a manifest is complete.
  std::ofstream(fs::path(dir) / "manifest.json") << manifest.dump(2);
}

std::map<std::string, ExportedProgram> programs_of(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components) {
  std::map<std::string, ExportedProgram> out;
  for (const auto& [name, artifact] : components) out.emplace(name, artifact->program);
  return out;
}

}  // namespace ingot::exporters
