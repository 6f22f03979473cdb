#include "ingot/exporters/generation_directory.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/models/encoder_decoder.h"
#include "ingot/models/vision_language.h"

namespace ingot::exporters {

void save_generation_directory(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components,
    const std::string& dir, const std::string& model_folder, const std::string& architecture,
    const GenerationExportOptions& o, const models::PretrainedModel* model) {
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
                        "config.json", "chat_template.jinja", "chat_template.json",
                        "preprocessor_config.json", "processor_config.json"}) {
    fs::path src = fs::path(model_folder) / f;
    if (fs::exists(src))
      fs::copy_file(src, fs::path(dir) / f, fs::copy_options::overwrite_existing);
  }
  if (model) {
    nlohmann::json pipeline = pipeline_manifest(*model, components, model_folder);
    if (!pipeline.is_null()) manifest["pipeline"] = pipeline;
  }
  // The manifest last: a directory with a manifest is complete.
  std::ofstream(fs::path(dir) / "manifest.json") << manifest.dump(2);
}

nlohmann::json encoder_decoder_pipeline(
    const models::EncoderDecoderModel& model,
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components,
    const std::string& model_folder) {
  for (const char* c : {"encoder", "cross_kv", "decode"}) {
    INGOT_CHECK(components.contains(c), ValueError,
                "[save_generation_directory] the encoder-decoder model {} lacks component '{}'",
                model.architecture(), c);
  }
  const models::EncoderInput in = model.encoder_input();
  auto step = [](const char* component, std::vector<std::string> inputs,
                 std::vector<std::string> outputs) {
    return nlohmann::json{{"component", component}, {"inputs", inputs}, {"outputs", outputs}};
  };
  nlohmann::json steps = nlohmann::json::array();
  steps.push_back(step("encoder", {in.name}, {"encoder_hidden_states"}));
  steps.push_back(
      step("cross_kv", {"encoder_hidden_states"}, {"cross_key_cache.N", "cross_value_cache.N"}));
  steps.push_back(step("decode", {"input_ids", "cross_key_cache.N", "cross_value_cache.N", "cache"},
                       {"logits", "cache"}));
  return {
      {"kind", "encoder-decoder"},
      {"encoder_input", in.name},
      {"decoder_prompt", model_folder.empty() ? std::vector<int64_t>{model.decoder_start_token_id()}
                                              : model.decoder_prompt(model_folder)},
      {"steps", steps}};
}

namespace {

// The decode component's inputs as a pipeline step lists them: its user inputs in order,
// the StaticCache tensors as one "cache" entry. ingot's layout gives [input_ids, cache]
// ([input_ids, rope_deltas, cache] with M-RoPE); seed 003's (ExecuTorch) [input_ids,
// attention_mask, position_ids, cache].
std::vector<std::string> decode_step_inputs(const ExportArtifact& decode) {
  std::vector<std::string> inputs;
  bool cache = false;
  for (const InputSpec& in : decode.program.signature.inputs) {
    if (in.kind != InputKind::UserInput) continue;
    const std::string& n = in.target;
    if (n.starts_with("key_cache.") || n.starts_with("value_cache.") || n == "cache_position") {
      if (!cache) inputs.push_back("cache");
      cache = true;
    } else {
      inputs.push_back(n);
    }
  }
  return inputs;
}

}  // namespace

nlohmann::json pipeline_manifest(
    const models::PretrainedModel& model,
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components,
    const std::string& model_folder) {
  if (const auto* encdec = dynamic_cast<const models::EncoderDecoderModel*>(&model))
    return encoder_decoder_pipeline(*encdec, components, model_folder);
  const auto* vlm = dynamic_cast<const models::VisionLanguageModel*>(&model);
  if (!vlm) return nullptr;
  for (const char* c : {"image_encoder", "language_model", "lm_head", "decode"}) {
    INGOT_CHECK(components.contains(c), ValueError,
                "[save_generation_directory] the vision-language model {} lacks component '{}'",
                model.architecture(), c);
  }
  const models::ImageInput image = vlm->image_input();
  const std::optional<models::PatchInput> patches = vlm->patch_input();
  const bool projector = components.contains("multi_modal_projector");
  const bool mrope = vlm->multimodal_rope();
  auto step = [](const char* component, std::vector<std::string> in, std::vector<std::string> out) {
    return nlohmann::json{{"component", component}, {"inputs", in}, {"outputs", out}};
  };
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json image_input = {
      {"channels", image.channels}, {"height", image.height}, {"width", image.width}};
  if (patches) {
    // Qwen2-VL: the side inputs and the M-RoPE positions come from image_grid_thw.
    image_input = {{"kind", "patches"},
                   {"channels", image.channels},
                   {"patch_dim", patches->patch_dim},
                   {"spatial_merge_size", patches->spatial_merge_size}};
    steps.push_back(
        {{"derive",
          "from image_grid_thw: vision_position_ids [image_tokens, m*m, 2] (each "
          "patch's row and column), vision_segment_ids [image_tokens] (its image), "
          "pixel_values [patches, patch_dim] viewed as [image_tokens, m*m, "
          "patch_dim]; with input_ids: M-RoPE position_ids [3, 1, tokens] and "
          "rope_deltas (models::mrope_position_ids)"},
         {"inputs", {"pixel_values", "image_grid_thw", "input_ids"}},
         {"outputs",
          {"vision_position_ids", "vision_segment_ids", "position_ids", "rope_deltas"}}});
    steps.push_back(step("image_encoder",
                         {"pixel_values", "vision_position_ids", "vision_segment_ids"},
                         {"image_embeds"}));
  } else {
    steps.push_back(step("image_encoder", {"pixel_values"}, {"image_features"}));
  }
  if (projector)
    steps.push_back(step("multi_modal_projector", {"image_features"}, {"image_embeds"}));
  steps.push_back(
      {{"merge",
        "inputs_embeds = embed_tokens[input_ids], the rows at image_token_id "
        "replaced in order by the image embeddings"},
       {"inputs", {"input_ids", projector || patches ? "image_embeds" : "image_features"}},
       {"outputs", {"inputs_embeds"}}});
  if (mrope) {
    steps.push_back(step("language_model", {"inputs_embeds", "position_ids", "cache"},
                         {"last_hidden_state", "cache"}));
  } else {
    steps.push_back(
        step("language_model", {"inputs_embeds", "cache"}, {"last_hidden_state", "cache"}));
  }
  steps.push_back(step("lm_head", {"last_hidden_state[:, -1:]"}, {"logits"}));
  steps.push_back(
      step("decode", decode_step_inputs(*components.at("decode")), {"logits", "cache"}));
  nlohmann::json pipeline = {
      {"kind", "vision-language"},
      {"image_token_id", vlm->image_token_id()},
      {"tokens_per_image", vlm->tokens_per_image()},
      {"image_input", image_input},
      {"embed_tokens", {{"component", "decode"}, {"tensor", vlm->embed_tokens_weight()}}},
      {"steps", steps}};
  if (mrope) pipeline["rope"] = "mrope";
  return pipeline;
}

std::map<std::string, ExportedProgram> programs_of(
    const std::map<std::string, std::unique_ptr<ExportArtifact>>& components) {
  std::map<std::string, ExportedProgram> out;
  for (const auto& [name, artifact] : components) out.emplace(name, artifact->program);
  return out;
}

}  // namespace ingot::exporters
