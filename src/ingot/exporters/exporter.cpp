#include "ingot/exporters/exporter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ingot/export/passes.h"
#include "ingot/exporters/fixes.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/exporters/quantize.h"
#include "ingot/exporters/skips.h"
#include "ingot/formats/serialize.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

void NativeArtifact::save(const std::string& path) const {
  ingot::save(program, path);
}

// --- component configs ------------------------------------------------------------------

ComponentConfigs::ComponentConfigs(const NativeExportConfig& config) : all_(config.clone()) {}

ComponentConfigs::ComponentConfigs(
    std::map<std::string, std::shared_ptr<const NativeExportConfig>> per_component)
    : per_component_(std::move(per_component)) {}

const NativeExportConfig& ComponentConfigs::at(const std::string& component) const {
  if (all_) return *all_;
  auto it = per_component_.find(component);
  if (it == per_component_.end() || !it->second) {
    std::vector<std::string> given;
    for (const auto& [name, c] : per_component_) given.push_back(name);
    INGOT_THROW(
        ValueError, "[export_for_generation] no config for component '{}' (configs given for: {})",
        component, given.empty() ? std::string("none") : fmt::format("{}", fmt::join(given, ", ")));
  }
  return *it->second;
}

// --- stages ---------------------------------------------------------------------------------

namespace {

// The input names of ModelInputs the example inputs define, in HF order.
std::vector<std::string> defined_inputs(const models::ModelInputs& in) {
  std::vector<std::string> out;
  if (in.input_ids.defined()) out.push_back("input_ids");
  if (in.attention_mask.defined()) out.push_back("attention_mask");
  if (in.position_ids.defined()) out.push_back("position_ids");
  if (in.token_type_ids.defined()) out.push_back("token_type_ids");
  return out;
}

// ── Stage 3: dynamic shapes (HF models): the dynamic_shapes spec from the config ──
ExportOptions pretrained_options(const NativeExportConfig& c, const models::ModelInputs& example) {
  ExportOptions o;
  o.input_names = {""};  // the fields are the inputs: "input_ids", not "arg0.input_ids"
  o.prefer_deferred_runtime_asserts_over_guards = c.prefer_deferred_runtime_asserts_over_guards;
  if (auto spec = c.dynamic_shapes()) {
    o.dynamic_shapes = DynamicShapes::tuple({*spec});
  } else if (c.dynamic) {
    std::map<std::string, DynamicShapes> per_input;
    for (const std::string& name : defined_inputs(example)) {
      per_input.emplace(name, DynamicShapes::tensor({{0, Dim("batch", 1, c.max_batch)},
                                                     {1, Dim("seq", 1, c.max_seq)}}));
    }
    o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::dict(per_input)});
    // Guards the model needs on batch / seq become asserts, which the fold_bound_asserts
    // program fix turns into narrower ranges: Dim.AUTO's inference, with the dims' names.
    o.prefer_deferred_runtime_asserts_over_guards = true;
  }
  return o;
}

}  // namespace

std::vector<std::string> Exporter::fix_program(ExportedProgram& program) {
  // ── Stage 5: program fixes (need the whole program: ranges, signature, state) ──
  std::vector<std::string> notes = apply_program_fixes(backend(), program);
  // ── Stage 6: node fixes (rewrite single nodes), then dead code removal ──
  for (std::string& n : apply_node_fixes(backend(), program)) notes.push_back(std::move(n));
  eliminate_dead_code(program);
  return notes;
}

std::unique_ptr<ExportArtifact> Exporter::run_stages(const std::string& architecture,
                                                     const std::string& task, nn::Module* module,
                                                     const TraceFn& trace,
                                                     const NativeExportConfig& config,
                                                     const ExportOptions& options) {
  // ── Stage 1: skip table ──
  check_not_skipped(architecture, backend(), task);
  // ── Stage 2: patches (module patches now; op patches while the trace runs; all undone
  //    when this scope ends, also on error) ──
  PatchScope patches(backend(), module);
  // ── Stage 3: dynamic shapes (the caller built `options` from the config) ──
  // ── Stage 4: trace ──
  ExportedProgram program = trace(options, patches);
  std::vector<std::string> notes;
  for (const std::string& p : patches.applied()) notes.push_back("patch " + p);
  for (std::string& n : fix_program(program)) notes.push_back(std::move(n));
  // ── Stage 6b: quantize (config.quantizer; exporters/quantize.h) ──
  QuantizeResult q =
      quantize_program(program, config.quantizer, config.export_format(), calibration_.get());
  for (std::string& n : q.notes) notes.push_back(std::move(n));
  std::unique_ptr<ExportArtifact> artifact = finish(std::move(program), std::move(notes), config);
  artifact->quantization = std::move(q.weights);
  return artifact;
}

void Exporter::prepare_quantizer(models::PretrainedModel& model,
                                 const NativeExportConfig& config,
                                 const std::string& model_folder) {
  check_quantizer_rules(model, config.quantizer);
  calibration_ = calibrate_for(model, config.quantizer,
                               model_folder.empty() ? model.name_or_path() : model_folder);
}

std::unique_ptr<ExportArtifact> Exporter::export_(models::PretrainedModel& model,
                                                  const models::ModelInputs& inputs,
                                                  const NativeExportConfig& config) {
  INGOT_CHECK(inputs.cache == nullptr, ValueError,
              "[export] inputs carry a KV cache; export a decode step with export_for_generation");
  prepare_quantizer(model, config);
  TraceFn trace = [&](const ExportOptions& o, PatchScope& patches) {
    auto forward = [&model](const models::ModelInputs& in) {
      std::map<std::string, Tensor> named = model.forward(in).named();
      if (named.contains("logits"))
        return std::map<std::string, Tensor>{{"logits", named.at("logits")}};
      return named;
    };
    return ingot::export_(&model, with_patches(patches, forward), std::tuple{inputs}, o);
  };
  return run_stages(model.architecture(), "export", &model, trace, config,
                    pretrained_options(config, inputs));
}

models::ModelInputs Exporter::example_inputs(const models::PretrainedModel& model,
                                             const NativeExportConfig& config) const {
  return example_model_inputs(model, config.example_batch, config.example_seq);
}

std::unique_ptr<ExportArtifact> Exporter::export_(models::PretrainedModel& model,
                                                  const NativeExportConfig& config) {
  return export_(model, example_inputs(model, config), config);
}

std::unique_ptr<ExportArtifact> Exporter::lower(ExportedProgram program,
                                                const NativeExportConfig& config) {
  std::vector<std::string> notes = fix_program(program);
  // No model to run: a method that needs calibration is refused by the quantize stage.
  QuantizeResult q = quantize_program(program, config.quantizer, config.export_format());
  for (std::string& n : q.notes) notes.push_back(std::move(n));
  std::unique_ptr<ExportArtifact> artifact = finish(std::move(program), std::move(notes), config);
  artifact->quantization = std::move(q.weights);
  return artifact;
}

std::unique_ptr<ExportArtifact> NativeExporter::finish(ExportedProgram program,
                                                       std::vector<std::string> notes,
                                                       const NativeExportConfig&) {
  // ── Stage 7 (native): verify the program ──
  program.verify();
  auto a = std::make_unique<NativeArtifact>();
  a->program = std::move(program);
  a->notes = std::move(notes);
  return a;
}

// --- AutoExporter ---------------------------------------------------------------------------

namespace {
std::map<std::string, ExporterFactory>& factories() {
  static std::map<std::string, ExporterFactory> f = {
      {"native", [] { return std::make_unique<NativeExporter>(); }}};
  return f;
}
}  // namespace

void register_exporter(const std::string& format, ExporterFactory factory) {
  auto [it, inserted] = factories().emplace(format, std::move(factory));
  INGOT_CHECK(inserted, InternalError, "[exporters] format '{}' is registered twice", format);
}

std::vector<std::string> registered_formats() {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories()) out.push_back(name);
  return out;
}

std::unique_ptr<Exporter> AutoExporter::from_format(const std::string& format) {
  auto it = factories().find(format);
  INGOT_CHECK(it != factories().end(), ValueError,
              "[AutoExporter] unknown export_format '{}' (known formats: {})", format,
              fmt::join(registered_formats(), ", "));
  return it->second();
}

std::unique_ptr<Exporter> AutoExporter::from_config(const NativeExportConfig& config) {
  return from_format(config.export_format());
}

}  // namespace ingot::exporters

namespace ingot::exporters {

ExportOptions Exporter::callable_options(const NativeExportConfig& c) {
  ExportOptions o;
  o.prefer_deferred_runtime_asserts_over_guards = c.prefer_deferred_runtime_asserts_over_guards;
  if (auto spec = c.dynamic_shapes())
    o.dynamic_shapes = *spec;
  else
    o.dynamic = c.dynamic;
  return o;
}

}  // namespace ingot::exporters
