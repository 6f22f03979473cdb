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
#include "ingot/exporters/config.h"
#include "ingot/exporters/generation_capture.h"
#include "ingot/exporters/patches.h"
#include "ingot/generation/manifest.h"
#include "ingot/models/model.h"

namespace ingot::runtime {
struct GenerationPackage;
}  // namespace ingot::runtime

namespace ingot::models {
class VisionLanguageModel;
class EncoderDecoderModel;
struct PatchInput;
}  // namespace ingot::models

namespace ingot::exporters {

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

  // Traces model.forward on `inputs` (HF-named: input_ids, attention_mask, ...) through
  // the tracing stages and lowers it. Outputs are named like transformers' (logits,
  // last_hidden_state, ...).
  std::unique_ptr<ExportArtifact> export_(models::PretrainedModel& model,
                                          const models::ModelInputs& inputs,
                                          const NativeExportConfig& config);
  // The same on example inputs made from config.example_batch / example_seq.
  std::unique_ptr<ExportArtifact> export_(models::PretrainedModel& model,
                                          const NativeExportConfig& config);

  // Generation components of a decoder (seed 003), the one generation export every
  // backend shares: decompose_for_generation captures generate()'s real forward calls
  // on example_generation_prompt(options.batch), then export_captured traces them.
  // A models::VisionLanguageModel also gets image_encoder, multi_modal_projector,
  // language_model and lm_head (export_vision_language, docs/generation.md); a
  // models::EncoderDecoderModel gets encoder, cross_kv and decode instead
  // (export_encoder_decoder).
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
  using TraceFn = std::function<ExportedProgram(const ExportOptions&, PatchScope&)>;
  // The multimodal components of a vision-language model, added to `out`
  // (exporter_generation_vlm.cpp).
  void export_vision_language(models::VisionLanguageModel& model, const ComponentConfigs& configs,
                              const GenerationExportOptions& options,
                              std::map<std::string, std::unique_ptr<ExportArtifact>>& out);
  // The components of an encoder-decoder model, added to `out`
  // (exporter_generation_encdec.cpp).
  void export_encoder_decoder(models::EncoderDecoderModel& model, const ComponentConfigs& configs,
                              const GenerationExportOptions& options,
                              std::map<std::string, std::unique_ptr<ExportArtifact>>& out);
  // Its parts: image_encoder (+ multi_modal_projector) over pixel_values [images, C, H, W];
  // a patch-input model's image_encoder (Qwen2-VL); language_model and lm_head; and one
  // component of a single tensor input (`dims` its dynamic dims).
  using Artifacts = std::map<std::string, std::unique_ptr<ExportArtifact>>;
  void export_image_encoder(models::VisionLanguageModel& model, const ComponentConfigs& configs,
                            Artifacts& out);
  void export_patch_encoder(models::VisionLanguageModel& model, const models::PatchInput& patches,
                            const ComponentConfigs& configs, Artifacts& out);
  void export_language_model(models::VisionLanguageModel& model, const ComponentConfigs& configs,
                             const GenerationExportOptions& options, Artifacts& out);
  void export_one_input(models::VisionLanguageModel& model, const std::string& component,
                        const std::function<std::map<std::string, Tensor>(const Tensor&)>& fn,
                        const Tensor& example, const std::string& input, generation::InputRole role,
                        std::map<int, Dim> dims, const ComponentConfigs& configs, Artifacts& out);
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
};

namespace detail {
// Stage 3 of a generation component over (first input, StaticCache), or with
// `mask_and_positions` over (input_ids, attention_mask, position_ids, StaticCache) (seed
// 003's decode layout): the token dim symbolic in [1, max_cache_len] when
// `symbolic_tokens`, the cache length with dynamic_cache_len; the cache tensors keep their
// names (key_cache.N, ...).
// An input between the first (input_ids / inputs_embeds) and the cache: its name and the
// axis that has the token count (-1: all static). M-RoPE models: decode's rope_deltas
// [batch, 1], language_model's position_ids [3, 1, tokens].
struct ExtraStepInput {
  std::string name;
  int tokens_axis = -1;
};
ExportOptions generation_component_options(const NativeExportConfig& config,
                                           const GenerationExportOptions& g,
                                           const nn::NamedTensors& cache, bool symbolic_tokens,
                                           const std::string& component,
                                           const std::string& first_input = "input_ids",
                                           bool mask_and_positions = false,
                                           const std::vector<ExtraStepInput>& extra = {});
}  // namespace detail

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
