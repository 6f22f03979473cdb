// Qwen2VLForConditionalGeneration (transformers' modeling_qwen2_vl.py): the vision
// transformer with its patch merger (qwen2_vl_vision.h; the merger is the projector,
// folded into the tower) and a Qwen2 language model with multimodal rotary (M-RoPE).
// Checkpoint names as save_pretrained writes them: visual.*, model.{embed_tokens, layers.N,
// norm}, lm_head. config.json: vision_config, text_config (or, in older checkpoints, the
// text fields at the top level), image_token_id; text rope_parameters.mrope_section.
//
// With pixel_values the forward encodes the images, merges their embeddings into the
// <|image_pad|> rows and runs the language model on mrope_position_ids; without, the
// text model over input_ids (the decode step), its positions shifted by rope_deltas.
#include <optional>

#include "ingot/models/decoder/decoder_lm.h"
#include "ingot/models/vision/qwen2_vl_vision.h"
#include "ingot/models/vision/vision_language.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

// mrope_section from rope_parameters (transformers 5) or rope_scaling (older configs).
std::vector<int64_t> mrope_section(const ConfigReader& text, int64_t head_dim) {
  std::vector<int64_t> sections;
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (!text.has(key)) continue;
    sections = text.child(key).get_int_list("mrope_section");
    break;
  }
  INGOT_CHECK(!sections.empty(), IoError,
              "[config] '{}': Qwen2-VL needs rope_parameters.mrope_section (the t / h / w "
              "frequency sections)",
              text.origin());
  int64_t sum = 0;
  for (int64_t s : sections) sum += s;
  INGOT_CHECK(sum * 2 == head_dim, IoError,
              "[config] '{}': mrope_section sums to {}, but the heads' rotary has {} frequencies "
              "(head_dim / 2)",
              text.origin(), sum, head_dim / 2);
  return sections;
}

std::shared_ptr<DecoderLM> make_text_model(const ConfigReader& text, const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(text);
  d.attention_bias = true;  // q, k, v (not o_proj), as Qwen2
  d.read_optional_sliding_windows(text);
  if (d.rope.type == "mrope") d.rope.type = "default";  // transformers' alias
  d.mrope_section = mrope_section(text, d.head_dim);
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
}

class Qwen2VLForConditionalGeneration : public VisionLanguageModel {
 public:
  Qwen2VLForConditionalGeneration(const ConfigReader& c, const LoadOptions& o)
      : VisionLanguageModel("Qwen2VLForConditionalGeneration") {
    vc_ = Qwen2VisionConfig::from_config(c.child("vision_config"));
    image_token_id_ = c.get_int("image_token_id", 151655);
    std::optional<ConfigReader> nested;
    if (c.has("text_config")) nested.emplace(c.child("text_config"));
    text_ = make_text_model(nested ? *nested : c, o);
    INGOT_CHECK(vc_.hidden_size == text_->config().hidden_size, IoError,
                "[config] '{}': vision_config.hidden_size {} (the merger's output) differs from "
                "the language model's hidden_size {}",
                c.origin(), vc_.hidden_size, text_->config().hidden_size);
    visual_ = register_module("visual", std::make_shared<Qwen2VisionTower>(vc_, o.compute_dtype));
    // The language model's modules at the top level (model.*, lm_head), as the checkpoint
    // names them.
    for (const auto& [name, child] : text_->children()) register_module(name, child);
  }

  std::vector<std::string> input_names() const override {
    return {"input_ids", "pixel_values", "image_grid_thw", "attention_mask"};
  }
  std::optional<nn::CacheSpec> cache_spec() const override { return text_->cache_spec(); }

  // Eager multimodal forward (pixel_values [patches, patch_dim] + image_grid_thw), or the
  // text model on input_ids (with rope_deltas after images).
  ModelOutputs forward(const ModelInputs& in) override {
    if (!in.pixel_values.defined()) return text_->forward(in);
    check_input_ids(in, architecture());
    INGOT_CHECK(in.image_grid_thw.defined(), ValueError,
                "[{}] pixel_values need image_grid_thw (the processor's (t, h, w) per image)",
                architecture());
    const Qwen2VisionInputs side =
        qwen2_vl_vision_inputs(in.image_grid_thw, vc_.spatial_merge_size);
    Tensor embeds = encode_patches(group_patches(in.pixel_values), side.vision_position_ids,
                                   side.vision_segment_ids);  // [tokens, hidden]
    ModelInputs lm = in;
    lm.inputs_embeds = merge_image_features(embed(in.input_ids), in.input_ids, unsqueeze(embeds, 0),
                                            image_token_id_);
    lm.position_ids =
        mrope_position_ids(in.input_ids, image_token_id_, in.image_grid_thw, vc_.spatial_merge_size)
            .position_ids;
    lm.input_ids = Tensor();
    lm.pixel_values = Tensor();
    return text_->forward(lm);
  }

  // The processor's pixel_values [patches, patch_dim] -> [tokens, merge^2, patch_dim].
  Tensor group_patches(const Tensor& pixel_values) const {
    const int64_t m2 = vc_.merge_area(), d = vc_.patch_dim();
    INGOT_CHECK(
        pixel_values.dim() == 2 && pixel_values.size(1) == d && pixel_values.size(0) % m2 == 0,
        ShapeError,
        "[{}] pixel_values must be [patches, {}] with patches a multiple of {} (the "
        "processor's flattened patches), got {}",
        architecture(), d, m2, pixel_values.shape_string());
    return reshape(pixel_values, {SymInt(pixel_values.size(0) / m2), SymInt(m2), SymInt(d)});
  }

  Tensor encode_images(const Tensor&) override {
    INGOT_THROW(NotSupportedError,
                "[{}] takes flattened patches with image_grid_thw (encode_patches), not "
                "[images, C, H, W]",
                architecture());
  }
  Tensor project(const Tensor& features) override { return features; }
  bool has_projector() const override { return false; }
  std::optional<PatchInput> patch_input() const override {
    return PatchInput{vc_.patch_dim(), vc_.spatial_merge_size};
  }
  Tensor encode_patches(const Tensor& pixel_values, const Tensor& positions,
                        const Tensor& segments) override {
    return visual_->forward(pixel_values, positions, segments);
  }
  bool multimodal_rope() const override { return true; }
  Tensor embed(const Tensor& input_ids) override { return text_->embed(input_ids); }
  Tensor language_model(const Tensor& inputs_embeds, const Tensor& position_ids,
                        nn::Cache* cache) override {
    return text_->hidden_from_embeds(inputs_embeds, position_ids, cache);
  }
  Tensor lm_head(const Tensor& hidden) override { return text_->logits(hidden); }
  int64_t image_token_id() const override { return image_token_id_; }
  ImageInput image_input() const override { return {vc_.in_channels, 0, 0}; }
  int64_t tokens_per_image() const override { return 0; }
  std::string embed_tokens_weight() const override { return DecoderLM::kEmbedTokensWeight; }
  const Qwen2VisionTower& vision_tower() const { return *visual_; }

 private:
  Qwen2VisionConfig vc_;
  std::shared_ptr<Qwen2VisionTower> visual_;
  std::shared_ptr<DecoderLM> text_;
  int64_t image_token_id_ = 0;
};

const ArchitectureRegistrar kQwen2VL("Qwen2VLForConditionalGeneration", [](const ConfigReader& c,
                                                                           const LoadOptions& o) {
  return std::make_shared<Qwen2VLForConditionalGeneration>(c, o);
});

}  // namespace
}  // namespace ingot::models
