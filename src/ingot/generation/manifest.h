// GenerationManifest: the typed contract between whoever exports generation components
// (exporters::Exporter::export_for_generation) and whoever runs them (runtime::Generator,
// `ingot generate`, other runtimes' loops). It is the same object in memory and on disk:
// a generation directory's manifest.json is its to_json(), and reading one checks the
// format and version before anything else (a manifest of another version is an IoError
// saying which version was found and what to do).
//
//   {"format": "ingot-generation", "version": 2, "export_format": "native",
//    "architecture": "LlamaForCausalLM",
//    "components": {"decode": "decode.ingot", ...},          component -> file in DIR
//    "inputs": {"decode": [{"name": "input_ids", "role": "input_ids"},
//                          {"name": "key_cache.0", "role": "key_cache", "layer": 0}, ...]},
//    "max_cache_len": 256, "multi_token_decode": true, "dynamic_cache_len": false,
//    "batch": 1,
//    "pipeline": {...}}             vision-language or encoder-decoder models only
//
// Version history: 1 had no "inputs" (runners guessed roles from names); 2 adds them.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ingot/generation/step_layout.h"

namespace ingot::generation {

inline constexpr int kManifestVersion = 2;
inline constexpr const char* kManifestFormat = "ingot-generation";
inline constexpr const char* kManifestFile = "manifest.json";

// One step of a pipeline as other runners read it: a component call, or a computation
// the runner does itself ("derive" / "merge", described in words), with the values it
// reads and writes. Documentation of the wiring; runtime::Generator implements it.
struct PipelineStep {
  std::string component;  // the component called, or empty for a derive / merge step
  std::string derive;     // what the runner computes (derive steps)
  std::string merge;      // how values are merged (merge steps)
  std::vector<std::string> inputs, outputs;
};

// The image input of a vision-language model: whole images [images, C, H, W], or a
// patch-input model's flattened patches [patches, patch_dim] with image_grid_thw.
struct ImageInputSpec {
  bool patches = false;
  int64_t channels = 0;
  int64_t height = 0, width = 0;                  // whole images
  int64_t patch_dim = 0, spatial_merge_size = 0;  // patches
};

// image_encoder [+ multi_modal_projector] -> merge into the text embeddings ->
// language_model -> lm_head, then decode (docs/generation.md).
struct VisionLanguagePipeline {
  int64_t image_token_id = -1;
  int64_t tokens_per_image = 0;
  ImageInputSpec image_input;
  std::string embed_tokens_component = "decode";  // the component holding the table
  std::string embed_tokens_tensor;                // its name among that program's state
  bool mrope = false;                             // M-RoPE positions (Qwen2-VL)
  std::vector<PipelineStep> steps;
};

// encoder -> cross_kv once per input, then decode from the decoder prompt.
struct EncoderDecoderPipeline {
  std::string encoder_input;            // the encoder's input name (input_ids, input_features)
  std::vector<int64_t> decoder_prompt;  // decoder_start_token_id (+ Whisper's forced tokens)
  std::vector<PipelineStep> steps;
};

struct ManifestComponent {
  std::string file;  // a file name inside the directory
  StepLayout layout;
};

enum class PipelineKind { kDecoderOnly, kVisionLanguage, kEncoderDecoder };

struct GenerationManifest {
  int version = kManifestVersion;
  std::string export_format = "native";  // "native", "onnx", "openvino", "executorch"
  std::string architecture;
  std::map<std::string, ManifestComponent> components;
  int64_t max_cache_len = 0;
  bool multi_token_decode = false;
  bool dynamic_cache_len = false;
  int64_t batch = 1;
  std::optional<VisionLanguagePipeline> vision_language;
  std::optional<EncoderDecoderPipeline> encoder_decoder;

  PipelineKind kind() const;
  // The layout of `component`; ValueError naming it and the components there are.
  const StepLayout& layout(const std::string& component) const;
  bool has_component(const std::string& component) const { return components.contains(component); }

  nlohmann::json to_json() const;
  // IoError naming `source` (the file read) and the field at fault; a manifest of another
  // format or version is refused before any other field is read.
  static GenerationManifest from_json(const nlohmann::json& j, const std::string& source);
  // DIR/manifest.json; IoError when it is missing ("export with --task generation").
  static GenerationManifest read(const std::string& dir);
  // Writes DIR/manifest.json (the directory must exist).
  void write(const std::string& dir) const;
};

// Whether DIR holds a generation manifest (a generation directory rather than a model
// folder).
bool is_generation_directory(const std::string& dir);

}  // namespace ingot::generation
