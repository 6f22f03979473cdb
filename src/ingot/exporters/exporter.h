// The exporter interface (transformers.exporters' HfExporter, natively): one interface,
// several backends. An exporter is a pipeline of named stages (docs/exporters.md): the
// tracing stages every backend shares (skip table, patches, dynamic shapes, trace,
// program fixes, node fixes), then the backend's own lowering.
//
//   NativeExporter exporter;                      // or OnnxExporter
//   NativeExportConfig config;  config.dynamic = true;
//   auto artifact = exporter.export_(*model, inputs, config);
//   artifact->save("model.ingot");
//
//   auto config = AutoExportConfig::from_json(R"({"export_format": "onnx", "dynamic": true})");
//   auto exporter = AutoExporter::from_config(*config);   // an OnnxExporter
//
// Any program can also be exported from a callable (seed-001 style) with export_fn, or
// lowered after the fact with lower().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/export/export.h"
#include "ingot/exporters/calibration.h"
#include "ingot/exporters/config.h"
#include "ingot/exporters/generation_capture.h"
#include "ingot/exporters/patches.h"
#include "ingot/exporters/quantize.h"
#include "ingot/generation/manifest.h"
#include "ingot/models/model.h"

namespace ingot::runtime {
struct GenerationPackage;
}  // namespace ingot::runtime

namespace ingot::exporters {

// One trace of a component through the export core (its example arguments captured).
using TraceFn = std::function<ExportedProgram(const ExportOptions&, PatchScope&)>;
struct ComponentPlan;  // generation_plan.h
using GenerationPlan = std::vector<ComponentPlan>;

// What an exporter produces: the backend's artifact plus the ExportedProgram it was
// lowered from, and notes (which patches and fixes took effect).
class ExportArtifact {
 public:
  virtual ~ExportArtifact() = default;
  virtual std::string format() const = 0;  // "native", "onnx"
  // The file name extension save() expects (".ingot", ".onnx").
  virtual std::string file_extension() const = 0;
  // Writes the artifact (an .ingot archive, an .onnx file with its data file).
  virtual void save(const std::string& path) const = 0;
  // The file a generation directory stores component `component` in (default
  // `<component><file_extension()>`; OpenVINO: openvino_model.xml for "decode").
  virtual std::string component_file(const std::string& component) const {
    return component + file_extension();
  }

  ExportedProgram program;
  std::vector<std::string> notes;
  // What the quantize stage did to each weight (empty without a quantizer).
  std::vector<WeightReport> quantization;
  // A generation component's user inputs and their roles (export_for_generation sets it).
  generation::StepLayout step_layout;
};

// The native artifact: the ExportedProgram itself, saved as an .ingot archive.
class NativeArtifact final : public ExportArtifact {
 public:
  std::string format() const override { return "native"; }
  std::string file_extension() const override { return ".ingot"; }
  void save(const std::string& path) const override;
};

// Configs per generation component ("prefill", "decode"); a single config serves every
// component.
class ComponentConfigs {
 public:
  ComponentConfigs(const NativeExportConfig& config);  // NOLINT: one config for all
  explicit ComponentConfigs(
      std::map<std::string, std::shared_ptr<const NativeExportConfig>> per_component);
  // The config of `component`; ValueError naming it and the given ones when absent.
  const NativeExportConfig& at(const std::string& component) const;

 private:
  std::shared_ptr<const NativeExportConfig> all_;
  std::map<std::string, std::shared_ptr<const NativeExportConfig>> per_component_;
};

using GenerationComponents = std::map<std::string, std::unique_ptr<ExportArtifact>>;

// What export_for_generation returns, the same in memory and on disk: the components'
// artifacts and their typed manifest (generation/manifest.h: each component's file and
// input roles, the export options, a vision-language or encoder-decoder model's
// pipeline). save() writes a generation directory (exporters/generation_export.h);
// package() hands native programs with the manifest to runtime::Generator without a
// round trip through files.
class GenerationExport {
 public:
  using Components = GenerationComponents;

  generation::GenerationManifest manifest;
  Components components;
  // Text files a backend's own runtime client reads, by file name (ONNX Runtime GenAI's
  // genai_config.json); save() writes them next to the components.
  std::map<std::string, std::string> client_files;

  // Map-like access to the components.
  std::unique_ptr<ExportArtifact>& at(const std::string& name);
  const std::unique_ptr<ExportArtifact>& at(const std::string& name) const;
  bool contains(const std::string& name) const { return components.contains(name); }
  size_t size() const { return components.size(); }
  Components::iterator begin() { return components.begin(); }
  Components::iterator end() { return components.end(); }
  Components::const_iterator begin() const { return components.begin(); }
  Components::const_iterator end() const { return components.end(); }

  // Adds a component made outside export_for_generation (ExecuTorch's llm_runner.pte),
  // recording its file and step layout in the manifest.
  void add(const std::string& name, std::unique_ptr<ExportArtifact> artifact);
  // The native programs with the manifest (what runtime::Generator runs).
  // NotSupportedError for another backend's components.
  runtime::GenerationPackage package() const;
  // Writes the generation directory DIR (above), copying the model folder's tokenizer,
  // template, config and processor files when `model_folder` is given.
  void save(const std::string& dir, const std::string& model_folder = "") const;
};

class Exporter {
 public:
  virtual ~Exporter() = default;
  // The backend name patches and fixes are registered under ("native", "onnx").
  virtual std::string backend() const = 0;
  // Whether generation components take attention_mask and position_ids when
  // GenerationExportOptions::mask_and_position_inputs is unset (seed 003's ExecuTorch
  // decode layout); false: the cache derives them.
  virtual bool generation_takes_mask_and_positions() const { return false; }
  // The example inputs export_(model, config) traces on, from example_model_inputs: a
  // backend may leave optional ones out, which the model then computes in the graph.
  virtual models::ModelInputs example_inputs(const models::PretrainedModel& model,
                                             const NativeExportConfig& config) const;

  // Traces model.forward on `inputs` (HF-named: input_ids, attention_mask, ...) through
  // the tracing stages and lowers it. Outputs are named like transformers' (logits,
  // last_hidden_state, ...).
  std::unique_ptr<ExportArtifact> export_(models::PretrainedModel& model,
                                          const models::ModelInputs& inputs,
                                          const NativeExportConfig& config);
  // The same on example inputs made from config.example_batch / example_seq.
  std::unique_ptr<ExportArtifact> export_(models::PretrainedModel& model,
                                          const NativeExportConfig& config);

  // Generation components (seed 003), the one generation export every backend shares:
  // the model family's GenerationPlan (generation_plan.h: a decoder's decode [+ prefill]
  // on generate()'s captured calls; a models::VisionLanguageModel's image_encoder,
  // multi_modal_projector, language_model and lm_head besides; a
  // models::EncoderDecoderModel's encoder, cross_kv and a multi-token decode), each
  // component traced through this backend's stages, with the backend's policy applied
  // (adjust_generation_options, add_generation_components).
  GenerationExport export_for_generation(models::PretrainedModel& model,
                                         const ComponentConfigs& configs,
                                         const GenerationExportOptions& options = {});
  // Traces captured calls (decompose_for_generation's, possibly edited) into the
  // components of `options`: {"decode"} with multi_token_decode, else {"prefill",
  // "decode"}. Each is the step (input_ids [batch, tokens], StaticCache) -> logits
  // [batch, tokens, vocab] through this backend's stages; the cache tensors (key_cache.N,
  // value_cache.N, cache_position) are mutated user inputs, written in place, and the
  // mask and positions come from the cache, or, with mask_and_position_inputs, the step
  // (input_ids, attention_mask, position_ids, StaticCache) (seed 003's decode layout).
  // `configs.at(component)` gives each one's
  // config. Encoders are in the skip table.
  GenerationExport export_captured(models::PretrainedModel& model,
                                   const std::map<std::string, CapturedCall>& calls,
                                   const ComponentConfigs& configs,
                                   const GenerationExportOptions& options);

  // Exports `fn(args...)` (lifting the state of `module`, which may be null) through the
  // same stages: any program of seed 001.
  template <typename Fn, typename... Args>
  std::unique_ptr<ExportArtifact> export_fn(nn::Module* module, Fn&& fn,
                                            const std::tuple<Args...>& args,
                                            const NativeExportConfig& config,
                                            std::vector<std::string> input_names = {}) {
    TraceFn trace = [&](const ExportOptions& options, PatchScope& patches) {
      return ingot::export_(module, with_patches(patches, fn), args, options);
    };
    ExportOptions options = callable_options(config);
    options.input_names = std::move(input_names);
    return run_stages(module ? module->type_name() : "function", "export", module, trace, config,
                      options);
  }

  // Lowers an already-traced program (e.g. loaded from an .ingot archive): the stages
  // after the trace. Patches cannot apply (the trace is done).
  std::unique_ptr<ExportArtifact> lower(ExportedProgram program, const NativeExportConfig& config);

 protected:
  // Backend policy of export_for_generation. The options this backend's generation
  // directory needs (OpenVINO: one stateful openvino_model.xml, so a multi-token decode).
  // `configs` are the components' configs (ONNX: `genai` picks the past/present layout).
  virtual void adjust_generation_options(const ComponentConfigs&, GenerationExportOptions&) const {}
  // Components for the backend's own runtime client, added after the traced ones
  // (ExecuTorch: llm_runner.pte for TextLLMRunner).
  virtual void add_generation_components(models::PretrainedModel&, const ComponentConfigs&,
                                         const GenerationExportOptions&, GenerationExport&) {}
  // Traces each component of `plan` through the stages, with its step layout.
  GenerationComponents trace_plan(models::PretrainedModel& model, const GenerationPlan& plan,
                                  const ComponentConfigs& configs);
  // The tracing stages (1-6) followed by finish().
  std::unique_ptr<ExportArtifact> run_stages(const std::string& architecture,
                                             const std::string& task, nn::Module* module,
                                             const TraceFn& trace, const NativeExportConfig& config,
                                             const ExportOptions& options);
  // Stage 3 for callables: `dynamic` makes every dim Dim::auto_(); dynamic_shapes_json is
  // a dict by argument name.
  static ExportOptions callable_options(const NativeExportConfig& config);
  // The backend's stages after the shared ones: lowering and validation.
  virtual std::unique_ptr<ExportArtifact> finish(ExportedProgram program,
                                                 std::vector<std::string> notes,
                                                 const NativeExportConfig& config) = 0;
  // The shared post-trace stages: program fixes and node fixes (and dead code removal).
  std::vector<std::string> fix_program(ExportedProgram& program);
  // Checks config.quantizer's rules against `model` and runs the model over its
  // calibration dataset when its method uses one (calibration.h); the quantize stage of
  // the traces that follow reads the statistics. `model_folder` gives the tokenizer
  // (default: the folder the model was loaded from).
  void prepare_quantizer(models::PretrainedModel& model, const NativeExportConfig& config,
                         const std::string& model_folder = "");
  // The calibration statistics prepare_quantizer collected (null: none), for backends that
  // quantise while writing (the GGUF file types).
  const std::shared_ptr<const CalibrationStats>& calibration() const { return calibration_; }

 private:
  std::shared_ptr<const CalibrationStats> calibration_;
};

// Native backend: the ExportedProgram itself.
class NativeExporter final : public Exporter {
 public:
  std::string backend() const override { return "native"; }

 protected:
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig& config) override;
};

// Picks the exporter for a config's export_format.
class AutoExporter {
 public:
  static std::unique_ptr<Exporter> from_config(const NativeExportConfig& config);
  static std::unique_ptr<Exporter> from_format(const std::string& format);
};

// Registers an exporter class for a format (the ONNX exporter registers "onnx").
using ExporterFactory = std::function<std::unique_ptr<Exporter>()>;
void register_exporter(const std::string& format, ExporterFactory factory);
std::vector<std::string> registered_formats();

}  // namespace ingot::exporters
