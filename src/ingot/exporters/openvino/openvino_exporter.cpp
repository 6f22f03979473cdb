#include "ingot/exporters/openvino/openvino_exporter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ingot/export/passes.h"
#include "ingot/exporters/fixes.h"
#include "ingot/exporters/openvino/ir_fixes.h"
#include "ingot/exporters/openvino/lowering.h"
#include "ingot/exporters/openvino/weights.h"
#include "ingot/exporters/openvino/writer.h"

namespace ingot::exporters {

void OpenVINOModel::save(const std::string& path) const {
  openvino::save_model(model, path);
}

std::string OpenVINOModel::component_file(const std::string& component) const {
  return component == "decode" ? "openvino_model.xml"
                               : fmt::format("openvino_{}_model.xml", component);
}

namespace {

// A generation step: input_ids plus the static cache (cache_position) as mutated inputs.
bool is_generation_step(const ExportedProgram& p) {
  bool ids = false, cache = false;
  for (const InputSpec& in : p.signature.inputs) ids = ids || in.target == "input_ids";
  for (const OutputSpec& o : p.signature.outputs)
    cache = cache || (o.kind == OutputKind::UserInputMutation && o.target == "cache_position");
  return ids && cache;
}

}  // namespace

std::unique_ptr<ExportArtifact> OpenVINOExporter::finish(ExportedProgram program,
                                                         std::vector<std::string> notes,
                                                         const NativeExportConfig& config) {
  OpenVINOConfig defaults;
  static_cast<NativeExportConfig&>(defaults) = config;
  const auto* given = dynamic_cast<const OpenVINOConfig*>(&config);
  const OpenVINOConfig& c = given ? *given : defaults;

  // ── Stage 7: decomposition to core ops; node fixes again on what it introduced ──
  decompose_to_core(program, {"ingot::quantized_linear"});  // translate_quantized.cpp
  for (std::string& n : apply_node_fixes(backend(), program)) notes.push_back(std::move(n));
  eliminate_dead_code(program);

  // ── Stage 8: OpenVINO translation (the translation table, openvino/translate_*.cpp);
  //    mutated inputs become variables (stateful) or input./output. pairs ──
  openvino::LoweringOptions lo;
  lo.stateful = c.stateful;
  lo.generation_inputs = is_generation_step(program);
  openvino::LoweredModel lowered = openvino::lower_program(program, lo);

  // ── Stage 9: OpenVINO IR fixes (openvino/ir_fixes.h) ──
  for (std::string& n : openvino::ir_fixes().apply(lowered.model)) notes.push_back(std::move(n));

  // ── Stage 10: weight compression (compress_to_fp16) ──
  if (c.compress_to_fp16) {
    const int64_t n = openvino::compress_to_fp16(lowered.model.graph);
    notes.push_back(fmt::format("compress_to_fp16: {} float32 weights stored as float16", n));
  }

  // ── Stage 11: metadata (rt_info: producer, variables, what the export changed) ──
  lowered.model.rt_info.emplace_back("ingot_producer", "ingot");
  if (!lowered.variables.empty())
    lowered.model.rt_info.emplace_back("ingot_variables",
                                       fmt::format("{}", fmt::join(lowered.variables, ";")));
  if (!notes.empty())
    lowered.model.rt_info.emplace_back("ingot_export_notes",
                                       fmt::format("{}", fmt::join(notes, "\n")));

  auto a = std::make_unique<OpenVINOModel>();
  a->model = std::move(lowered.model);
  a->input_names = std::move(lowered.input_names);
  a->output_names = std::move(lowered.output_names);
  a->variables = std::move(lowered.variables);
  a->program = std::move(program);
  a->notes = std::move(notes);
  return a;
}

namespace {
const bool kRegistered = [] {
  register_exporter("openvino", [] { return std::make_unique<OpenVINOExporter>(); });
  return true;
}();
}  // namespace

}  // namespace ingot::exporters
