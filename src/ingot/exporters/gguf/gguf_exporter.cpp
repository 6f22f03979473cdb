#include "ingot/exporters/gguf/gguf_exporter.h"

#include "ingot/exporters/config_json.h"
#include "ingot/exporters/gguf/gguf_tensors.h"

namespace ingot::exporters {

std::string GgufConfig::to_json() const {
  nlohmann::ordered_json j = native_config_json(*this);
  j["outtype"] = outtype;
  j["model_folder"] = model_folder;
  j["kquant_search"] = kquant_search;
  return j.dump(2);
}

std::vector<std::string> GgufArtifact::write(const std::string& path) const {
  INGOT_CHECK(!config.model_folder.empty(), ValueError,
              "[gguf] no model folder (config key 'model_folder'): the GGUF needs its "
              "config.json and tokenizer");
  std::vector<std::string> notes;
  GgufFileTypeOptions kquant;
  if (config.quantizer.gguf_file_type()) kquant.file_type = config.quantizer.scheme;
  kquant.calibration = calibration;
  kquant.search = config.kquant_search == "llamacpp" ? formats::KQuantSearch::LlamaCpp
                                                     : formats::KQuantSearch::Refined;
  gguf_from_program(program, quantization, config.model_folder, config.outtype, notes, kquant)
      .write(path);
  return notes;
}

void GgufExporter::adjust_generation_options(const ComponentConfigs&,
                                             GenerationExportOptions&) const {
  INGOT_THROW(NotSupportedError,
              "[gguf] a GGUF holds the weights and llama.cpp builds the decode graph itself: "
              "export it with --task forward (the default)");
}

std::unique_ptr<ExportArtifact> GgufExporter::finish(ExportedProgram program,
                                                     std::vector<std::string> notes,
                                                     const NativeExportConfig& config) {
  // ── Stage 7 (gguf): verify the program; the artifact writes its state as a GGUF ──
  program.verify();
  auto a = std::make_unique<GgufArtifact>();
  a->program = std::move(program);
  a->notes = std::move(notes);
  if (const auto* g = dynamic_cast<const GgufConfig*>(&config)) a->config = *g;
  a->calibration = calibration();  // the importance of a file type's k-quant search
  return a;
}

namespace {

void read_gguf_keys(const nlohmann::ordered_json& j, NativeExportConfig& config,
                    const std::string& origin) {
  auto& c = static_cast<GgufConfig&>(config);
  read_config_key(j, "outtype", c.outtype, origin);
  read_config_key(j, "model_folder", c.model_folder, origin);
  read_config_key(j, "kquant_search", c.kquant_search, origin);
  INGOT_CHECK(c.kquant_search == "refined" || c.kquant_search == "llamacpp", ValueError,
              "[export config] {}: kquant_search '{}' is not refined or llamacpp", origin,
              c.kquant_search);
  INGOT_CHECK(c.outtype == "f32" || c.outtype == "f16" || c.outtype == "bf16", ValueError,
              "[export config] {}: outtype '{}' is not f32, f16 or bf16", origin, c.outtype);
}

const bool kRegistered = [] {
  register_config_format("gguf", {{"outtype", "model_folder", "kquant_search"},
                                  [] { return std::make_unique<GgufConfig>(); },
                                  read_gguf_keys});
  register_exporter("gguf", [] { return std::make_unique<GgufExporter>(); });
  return true;
}();

}  // namespace

}  // namespace ingot::exporters
