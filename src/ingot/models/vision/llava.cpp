// LlavaForConditionalGeneration: a CLIP vision tower, a two-layer projector and a
// Llama / Mistral / Qwen2 language model (transformers' modeling_llava.py). Checkpoint
// names (as save_pretrained writes them): vision_tower.* (clip_vision.h),
// multi_modal_projector.{linear_1, linear_2}, language_model.{model.*, lm_head} (the
// DecoderLM of text_config). The image features are hidden_states[vision_feature_layer]
// of the tower, without the class token for the "default" select strategy; the
// projector maps them to the text width and they replace the <image> tokens' embeddings.
#include "ingot/models/decoder/decoder_lm.h"
#include "ingot/models/vision/clip_vision.h"
#include "ingot/models/vision/vision_language.h"
#include "ingot/nn/attention.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

// text_config.model_type -> the causal LM class that reads it.
std::string text_architecture(const ConfigReader& text) {
  const std::string type = text.get_string("model_type", "llama");
  if (type == "llama") return "LlamaForCausalLM";
  if (type == "mistral") return "MistralForCausalLM";
  if (type == "qwen2") return "Qwen2ForCausalLM";
  INGOT_THROW(NotSupportedError,
              "[LlavaForConditionalGeneration] '{}': text_config.model_type '{}' is not supported "
              "(supported: llama, mistral, qwen2)",
              text.origin(), type);
}

class LlavaForConditionalGeneration : public VisionLanguageModel {
 public:
  LlavaForConditionalGeneration(const ConfigReader& c, const LoadOptions& o)
      : VisionLanguageModel("LlavaForConditionalGeneration") {
    ConfigReader vision = c.child("vision_config");
    const std::string vision_type = vision.get_string("model_type", "clip_vision_model");
    INGOT_CHECK(vision_type == "clip_vision_model", NotSupportedError,
                "[LlavaForConditionalGeneration] '{}': vision_config.model_type '{}' is not "
                "supported (supported: clip_vision_model)",
                c.origin(), vision_type);
    const ClipVisionConfig vc = ClipVisionConfig::from_config(vision);
    image_token_id_ = c.has("image_token_id") ? c.get_int("image_token_id")
                                              : c.get_int("image_token_index", 32000);
    int64_t layer = -2;
    try {
      layer = c.get_int("vision_feature_layer", -2);
    } catch (const IoError&) {  // a list: the layers' features concatenated
      INGOT_THROW(NotSupportedError,
                  "[LlavaForConditionalGeneration] '{}': vision_feature_layer must be one layer "
                  "index; a list of layers is not supported yet",
                  c.origin());
    }
    if (layer < 0) layer += vc.num_layers + 1;  // an index into hidden_states (layers + 1)
    INGOT_CHECK(layer >= 0 && layer <= vc.num_layers, IoError,
                "[config] '{}': vision_feature_layer {} is outside the tower's {} hidden states",
                c.origin(), c.get_int("vision_feature_layer", -2), vc.num_layers + 1);
    feature_layer_ = layer;
    strategy_ = c.get_string("vision_feature_select_strategy", "default");
    INGOT_CHECK(strategy_ == "default" || strategy_ == "full", NotSupportedError,
                "[config] '{}': vision_feature_select_strategy '{}' is not supported (default, "
                "full)",
                c.origin(), strategy_);
    projector_act_ = c.get_string("projector_hidden_act", "gelu");
    nn::check_activation(projector_act_);
    ConfigReader text = c.child("text_config");
    auto lm = create_model(text_architecture(text), text, o);
    text_ = std::dynamic_pointer_cast<DecoderLM>(lm);
    INGOT_CHECK(text_ != nullptr, InternalError,
                "[LlavaForConditionalGeneration] the text model "
                "is not a DecoderLM");
    const bool bias = c.get_bool("multimodal_projector_bias", true);
    const int64_t hidden = text_->config().hidden_size;
    image_ = {vc.num_channels, vc.image_size, vc.image_size};
    tokens_per_image_ = vc.num_patches() + (strategy_ == "full" ? 1 : 0);
    vision_ =
        register_module("vision_tower", std::make_shared<ClipVisionTower>(vc, o.compute_dtype));
    auto projector = register_module("multi_modal_projector",
                                     std::make_shared<nn::Container>("LlavaMultiModalProjector"));
    linear_1_ = projector->add(
        "linear_1", std::make_shared<nn::Linear>(vc.hidden_size, hidden, bias, o.compute_dtype));
    linear_2_ = projector->add("linear_2",
                               std::make_shared<nn::Linear>(hidden, hidden, bias, o.compute_dtype));
    register_module("language_model", text_);
  }

  std::vector<std::string> input_names() const override {
    return {"input_ids", "pixel_values", "attention_mask", "position_ids"};
  }
  std::optional<nn::CacheSpec> cache_spec() const override { return text_->cache_spec(); }

  // With pixel_values (eager only: the merge reads the ids): the multimodal forward;
  // without: the language model over input_ids (the decode step).
  ModelOutputs forward(const ModelInputs& in) override {
    if (!in.pixel_values.defined()) return text_->forward(in);
    check_input_ids(in, architecture());
    ModelInputs lm = in;
    lm.inputs_embeds =
        merge_image_features(embed(in.input_ids), in.input_ids,
                             project(encode_images(in.pixel_values)), image_token_id_);
    lm.input_ids = Tensor();
    lm.pixel_values = Tensor();
    return text_->forward(lm);
  }

  Tensor encode_images(const Tensor& pixel_values) override {
    Tensor h = vision_->hidden_state(pixel_values, feature_layer_);  // [n, 1 + patches, F]
    return strategy_ == "default" ? slice(h, 1, 1, std::nullopt) : h;
  }
  Tensor project(const Tensor& features) override {
    return linear_2_->forward(nn::activation(projector_act_, linear_1_->forward(features)));
  }
  Tensor embed(const Tensor& input_ids) override { return text_->embed(input_ids); }
  Tensor language_model(const Tensor& inputs_embeds, const Tensor& position_ids,
                        nn::Cache* cache) override {
    return text_->hidden_from_embeds(inputs_embeds, position_ids, cache);
  }
  Tensor lm_head(const Tensor& hidden) override { return text_->logits(hidden); }
  int64_t image_token_id() const override { return image_token_id_; }
  ImageInput image_input() const override { return image_; }
  int64_t tokens_per_image() const override { return tokens_per_image_; }
  std::string embed_tokens_weight() const override {
    return std::string("language_model.") + DecoderLM::kEmbedTokensWeight;
  }

 private:
  std::shared_ptr<ClipVisionTower> vision_;
  std::shared_ptr<nn::Linear> linear_1_, linear_2_;
  std::shared_ptr<DecoderLM> text_;
  int64_t image_token_id_ = 0, feature_layer_ = 0, tokens_per_image_ = 0;
  std::string strategy_, projector_act_;
  ImageInput image_;
};

const ArchitectureRegistrar kLlava("LlavaForConditionalGeneration",
                                   [](const ConfigReader& c, const LoadOptions& o) {
                                     return std::make_shared<LlavaForConditionalGeneration>(c, o);
                                   });

}  // namespace
}  // namespace ingot::models
