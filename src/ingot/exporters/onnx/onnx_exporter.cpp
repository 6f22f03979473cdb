#include "ingot/exporters/onnx/onnx_exporter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "ingot/export/passes.h"
#include "ingot/exporters/fixes.h"
#include "ingot/exporters/generation_capture.h"
#include "ingot/exporters/onnx/genai_config.h"
#include "ingot/exporters/onnx/ir_fixes.h"
#include "ingot/exporters/onnx/lowering.h"
#include "ingot/exporters/onnx/optimize.h"
#include "ingot/exporters/onnx/quantized_lowering.h"

namespace ingot::exporters {

namespace {

// Weights beyond this go to external data under external_data = "auto" (protobuf
// cannot hold 2 GiB, and a separate mmap-able file loads faster long before that).
constexpr size_t kAutoExternalBytes = size_t(1) << 30;

size_t initializer_bytes(const onnx::GraphProto& g) {
  size_t n = 0;
  for (const auto& t : g.initializer) n += t.raw_data.size();
  return n;
}

}  // namespace

onnx::SaveOptions OnnxProgram::save_options(const std::string& path) const {
  onnx::SaveOptions o;
  const bool external =
      external_data == "always" ||
      (external_data == "auto" && initializer_bytes(model.graph) > kAutoExternalBytes);
  if (external) {
    o.external_data_file = std::filesystem::path(path).filename().string() + ".data";
    o.external_threshold = size_t(external_threshold);
  }
  return o;
}

void OnnxProgram::save(const std::string& path) const {
  onnx::save_model(model, path, save_options(path));
}

std::unique_ptr<ExportArtifact> OnnxExporter::finish(ExportedProgram program,
                                                     std::vector<std::string> notes,
                                                     const NativeExportConfig& config) {
  OnnxConfig defaults;
  static_cast<NativeExportConfig&>(defaults) = config;
  const auto* given = dynamic_cast<const OnnxConfig*>(&config);
  const OnnxConfig& c = given ? *given : defaults;

  // ── Stage 7: decomposition to core ops; node fixes again on what it introduced ──
  decompose_to_core(program, {"ingot::quantized_linear"});  // translate_quantized.cpp
  for (std::string& n : apply_node_fixes(backend(), program)) notes.push_back(std::move(n));
  eliminate_dead_code(program);

  // ── Stage 8: ONNX translation (the translation table, onnx/translate_*.cpp) ──
  onnx::LoweringOptions lo;
  lo.opset = c.opset;
  lo.quantized_matmul = c.quantized_matmul;
  onnx::LoweredModel lowered = onnx::lower_program(program, lo);
  onnx::finish_quantized_model(lowered.model);

  // ── Stage 9: ONNX IR fixes (onnx/ir_fixes.h) ──
  for (std::string& n : onnx::ir_fixes().apply(lowered.model)) notes.push_back(std::move(n));

  // ── Stage 10: optimisation (optional): constant folding of shape computations ──
  if (c.optimize) {
    onnx::OptimizeStats s = onnx::optimize(lowered.model);
    notes.push_back(
        fmt::format("optimize: {} nodes -> {} ({} folded, {} constants merged, {} removed)",
                    s.nodes_before, s.nodes_after, s.folded, s.merged, s.removed));
  }

  // ── Stage 11: metadata (in-place pairs, what the export changed) ──
  std::vector<std::string> pairs;
  for (const auto& [in, out] : lowered.inplace_pairs) pairs.push_back(in + "=" + out);
  if (!pairs.empty())
    lowered.model.metadata_props.push_back(
        {"ingot.inplace_pairs", fmt::format("{}", fmt::join(pairs, ";"))});
  if (!notes.empty())
    lowered.model.metadata_props.push_back(
        {"ingot.export_notes", fmt::format("{}", fmt::join(notes, "\n"))});

  auto a = std::make_unique<OnnxProgram>();
  a->model = std::move(lowered.model);
  a->inplace_pairs = std::move(lowered.inplace_pairs);
  a->input_names = std::move(lowered.input_names);
  a->output_names = std::move(lowered.output_names);
  a->external_data = c.external_data;
  a->external_threshold = c.external_threshold;
  a->program = std::move(program);
  a->notes = std::move(notes);
  return a;
}

namespace {
const bool kRegistered = [] {
  register_exporter("onnx", [] { return std::make_unique<OnnxExporter>(); });
  return true;
}();
}  // namespace

namespace {

bool wants_genai(const ComponentConfigs& configs) {
  const auto* c = dynamic_cast<const OnnxConfig*>(&configs.at("decode"));
  return c && c->genai;
}

}  // namespace

void OnnxExporter::adjust_generation_options(const ComponentConfigs& configs,
                                             GenerationExportOptions& g) const {
  if (!wants_genai(configs)) return;
  g.cache_layout = CacheLayout::kPastPresent;
  g.multi_token_decode = true;
}

void OnnxExporter::add_generation_components(models::PretrainedModel& model,
                                             const ComponentConfigs& configs,
                                             const GenerationExportOptions& g,
                                             GenerationExport& out) {
  if (!wants_genai(configs)) return;
  INGOT_CHECK(!g.model_folder.empty(), ValueError,
              "[onnx genai] genai_config.json is made from the model folder's config.json and "
              "generation_config.json: set GenerationExportOptions::model_folder");
  out.client_files["genai_config.json"] = onnx::genai_config_json(
      model, {g.model_folder, out.manifest.components.at("decode").file, g.max_cache_len});
}

}  // namespace ingot::exporters
