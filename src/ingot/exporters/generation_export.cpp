#include "ingot/exporters/generation_export.h"

#include <charconv>
#include <filesystem>
#include <fstream>

#include "ingot/exporters/past_present_names.h"
#include "ingot/models/encdec/encoder_decoder.h"
#include "ingot/models/vision/vision_language.h"
#include "ingot/runtime/generator/generator.h"

namespace ingot::exporters {

namespace fs = std::filesystem;
using generation::InputRole;
using generation::PipelineStep;

std::unique_ptr<ExportArtifact>& GenerationExport::at(const std::string& name) {
  return const_cast<std::unique_ptr<ExportArtifact>&>(std::as_const(*this).at(name));
}

const std::unique_ptr<ExportArtifact>& GenerationExport::at(const std::string& name) const {
  auto it = components.find(name);
  if (it != components.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [n, a] : components) names.push_back(n);
  INGOT_THROW(ValueError, "[GenerationExport] no component '{}' (components: {})", name,
              fmt::join(names, ", "));
}

void GenerationExport::add(const std::string& name, std::unique_ptr<ExportArtifact> artifact) {
  INGOT_CHECK(artifact->format() == manifest.export_format, ValueError,
              "[GenerationExport] component '{}' is {}, the others {}", name, artifact->format(),
              manifest.export_format);
  manifest.components[name] = {artifact->component_file(name), artifact->step_layout};
  components[name] = std::move(artifact);
}

runtime::GenerationPackage GenerationExport::package() const {
  runtime::GenerationPackage p{manifest, {}};
  for (const auto& [name, artifact] : components) {
    INGOT_CHECK(artifact->format() == "native", NotSupportedError,
                "[GenerationExport] component '{}' is {}; ingot's Generator runs native components "
                "(export with the native exporter, or run these with their own runtime)",
                name, artifact->format());
    p.programs.emplace(name, artifact->program);
  }
  return p;
}

void GenerationExport::save(const std::string& dir, const std::string& model_folder) const {
  INGOT_CHECK(!components.empty(), ValueError, "[GenerationExport] no components to save");
  fs::create_directories(dir);
  for (const auto& [name, artifact] : components)
    artifact->save((fs::path(dir) / manifest.components.at(name).file).string());
  if (!model_folder.empty()) {
    for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json",
                          "config.json", "chat_template.jinja", "chat_template.json",
                          "preprocessor_config.json", "processor_config.json"}) {
      fs::path src = fs::path(model_folder) / f;
      if (fs::exists(src))
        fs::copy_file(src, fs::path(dir) / f, fs::copy_options::overwrite_existing);
    }
  }
  for (const auto& [file, text] : client_files) {
    std::ofstream out(fs::path(dir) / file, std::ios::binary);
    out << text;
    INGOT_CHECK(out.good(), IoError, "[GenerationExport] cannot write '{}'",
                (fs::path(dir) / file).string());
  }
  std::map<std::string, std::vector<WeightReport>> quantization;
  for (const auto& [name, artifact] : components)
    if (!artifact->quantization.empty()) quantization[name] = artifact->quantization;
  if (!quantization.empty())
    write_quantization_report((fs::path(dir) / "quantization.json").string(), quantization);
  manifest.write(dir);  // last: a directory with a manifest is complete
}

namespace {

// `name` = prefix + a layer number ("key_cache.3" with prefix "key_cache."), or -1.
int64_t layer_after(const std::string& name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return -1;
  int64_t layer = -1;
  const char* begin = name.data() + prefix.size();
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(begin, end, layer);
  return ec == std::errc() && ptr == end && begin != end ? layer : -1;
}

// The role of a state tensor the exporter passed after the leading inputs: the names are
// those nn::StaticCache::named_tensors() and models::CrossAttentionCache::named() give.
generation::StepInput state_input(const std::string& name) {
  if (name == "cache_position") return {name, InputRole::kCachePosition};
  const std::pair<std::string_view, InputRole> per_layer[] = {
      {"key_cache.", InputRole::kKeyCache},
      {"value_cache.", InputRole::kValueCache},
      {"cross_key_cache.", InputRole::kCrossKey},
      {"cross_value_cache.", InputRole::kCrossValue}};
  for (const auto& [prefix, role] : per_layer) {
    if (int64_t layer = layer_after(name, prefix); layer >= 0) return {name, role, layer};
  }
  // The growing cache's inputs (past_present_names.h): past_key_values.N.key / .value.
  for (const auto& [suffix, role] :
       {std::pair<std::string_view, InputRole>{".key", InputRole::kPastKey},
        {".value", InputRole::kPastValue}}) {
    if (!name.ends_with(suffix)) continue;
    const std::string head = name.substr(0, name.size() - suffix.size());
    if (int64_t layer = layer_after(head, kPastPrefix); layer >= 0) return {name, role, layer};
  }
  INGOT_THROW(InternalError,
              "[export_for_generation] input '{}' is neither a leading input nor a cache or "
              "cross-attention tensor; the exporter must give its role",
              name);
}

PipelineStep step(std::string component, std::vector<std::string> inputs,
                  std::vector<std::string> outputs) {
  return {std::move(component), "", "", std::move(inputs), std::move(outputs)};
}

// The decode component's inputs as a pipeline step lists them: its inputs in order, the
// StaticCache tensors as one "cache" entry.
std::vector<std::string> decode_step_inputs(const generation::StepLayout& layout) {
  std::vector<std::string> inputs;
  bool cache = false;
  for (const generation::StepInput& in : layout.inputs) {
    if (!generation::is_cache_role(in.role))
      inputs.push_back(in.name);
    else if (!std::exchange(cache, true))
      inputs.push_back("cache");
  }
  return inputs;
}

generation::EncoderDecoderPipeline encoder_decoder_pipeline(
    const models::EncoderDecoderModel& model, const GenerationExport::Components& components,
    const std::string& model_folder) {
  for (const char* c : {"encoder", "cross_kv", "decode"}) {
    INGOT_CHECK(components.contains(c), ValueError,
                "[export_for_generation] the encoder-decoder model {} lacks component '{}'",
                model.architecture(), c);
  }
  const std::string input = model.encoder_input().name;
  generation::EncoderDecoderPipeline p;
  p.encoder_input = input;
  p.decoder_prompt = model_folder.empty() ? std::vector<int64_t>{model.decoder_start_token_id()}
                                          : model.decoder_prompt(model_folder);
  p.steps = {
      step("encoder", {input}, {"encoder_hidden_states"}),
      step("cross_kv", {"encoder_hidden_states"}, {"cross_key_cache.N", "cross_value_cache.N"}),
      step("decode", {"input_ids", "cross_key_cache.N", "cross_value_cache.N", "cache"},
           {"logits", "cache"})};
  return p;
}

generation::VisionLanguagePipeline vision_language_pipeline(
    const models::VisionLanguageModel& vlm, const GenerationExport::Components& components) {
  for (const char* c : {"image_encoder", "language_model", "lm_head", "decode"}) {
    INGOT_CHECK(components.contains(c), ValueError,
                "[export_for_generation] the vision-language model {} lacks component '{}'",
                vlm.architecture(), c);
  }
  const models::ImageInput image = vlm.image_input();
  const std::optional<models::PatchInput> patches = vlm.patch_input();
  const bool projector = components.contains("multi_modal_projector");
  generation::VisionLanguagePipeline p;
  p.image_token_id = vlm.image_token_id();
  p.tokens_per_image = vlm.tokens_per_image();
  p.image_input.channels = image.channels;
  p.embed_tokens_tensor = vlm.embed_tokens_weight();
  p.mrope = vlm.multimodal_rope();
  if (patches) {
    // Qwen2-VL: the side inputs and the M-RoPE positions come from image_grid_thw.
    p.image_input.patches = true;
    p.image_input.patch_dim = patches->patch_dim;
    p.image_input.spatial_merge_size = patches->spatial_merge_size;
    p.steps.push_back(
        {"",
         "from image_grid_thw: vision_position_ids [image_tokens, m*m, 2] (each "
         "patch's row and column), vision_segment_ids [image_tokens] (its image), "
         "pixel_values [patches, patch_dim] viewed as [image_tokens, m*m, "
         "patch_dim]; with input_ids: M-RoPE position_ids [3, 1, tokens] and "
         "rope_deltas (models::mrope_position_ids)",
         "",
         {"pixel_values", "image_grid_thw", "input_ids"},
         {"vision_position_ids", "vision_segment_ids", "position_ids", "rope_deltas"}});
    p.steps.push_back(step("image_encoder",
                           {"pixel_values", "vision_position_ids", "vision_segment_ids"},
                           {"image_embeds"}));
  } else {
    p.image_input.height = image.height;
    p.image_input.width = image.width;
    p.steps.push_back(step("image_encoder", {"pixel_values"}, {"image_features"}));
  }
  if (projector)
    p.steps.push_back(step("multi_modal_projector", {"image_features"}, {"image_embeds"}));
  p.steps.push_back({"",
                     "",
                     "inputs_embeds = embed_tokens[input_ids], the rows at image_token_id "
                     "replaced in order by the image embeddings",
                     {"input_ids", projector || patches ? "image_embeds" : "image_features"},
                     {"inputs_embeds"}});
  if (p.mrope) {
    p.steps.push_back(step("language_model", {"inputs_embeds", "position_ids", "cache"},
                           {"last_hidden_state", "cache"}));
  } else {
    p.steps.push_back(
        step("language_model", {"inputs_embeds", "cache"}, {"last_hidden_state", "cache"}));
  }
  p.steps.push_back(step("lm_head", {"last_hidden_state[:, -1:]"}, {"logits"}));
  p.steps.push_back(step("decode", decode_step_inputs(components.at("decode")->step_layout),
                         {"logits", "cache"}));
  return p;
}

}  // namespace

generation::StepLayout step_layout_of(const ExportedProgram& program,
                                      const std::vector<InputRole>& leading) {
  generation::StepLayout layout;
  for (const InputSpec& in : program.signature.inputs) {
    if (in.kind != InputKind::UserInput) continue;
    if (layout.inputs.size() < leading.size())
      layout.inputs.push_back({in.target, leading[layout.inputs.size()]});
    else
      layout.inputs.push_back(state_input(in.target));
  }
  INGOT_CHECK(layout.inputs.size() >= leading.size(), InternalError,
              "[export_for_generation] the program has {} user inputs, fewer than the {} leading "
              "ones",
              layout.inputs.size(), leading.size());
  return layout;
}

generation::GenerationManifest generation_manifest(const models::PretrainedModel& model,
                                                   const GenerationExport::Components& components,
                                                   const GenerationExportOptions& o) {
  INGOT_CHECK(!components.empty(), ValueError, "[export_for_generation] no components");
  generation::GenerationManifest m;
  m.export_format = components.begin()->second->format();
  m.architecture = model.architecture();
  m.max_cache_len = o.max_cache_len;
  m.multi_token_decode = o.multi_token_decode;
  m.dynamic_cache_len = o.dynamic_cache_len;
  m.batch = o.batch;
  for (const auto& [name, artifact] : components) {
    INGOT_CHECK(artifact->format() == m.export_format, ValueError,
                "[export_for_generation] component '{}' is {}, the others {}", name,
                artifact->format(), m.export_format);
    m.components[name] = {artifact->component_file(name), artifact->step_layout};
  }
  if (const auto* encdec = dynamic_cast<const models::EncoderDecoderModel*>(&model))
    m.encoder_decoder = encoder_decoder_pipeline(*encdec, components, o.model_folder);
  else if (const auto* vlm = dynamic_cast<const models::VisionLanguageModel*>(&model);
           vlm && components.contains("image_encoder"))  // not export_captured's text part
    m.vision_language = vision_language_pipeline(*vlm, components);
  return m;
}

}  // namespace ingot::exporters
