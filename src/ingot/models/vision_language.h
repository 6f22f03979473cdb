// Vision-language models (LLaVA): a PretrainedModel whose forward also takes
// pixel_values, and the parts export_for_generation splits it into (seed 003's names):
//
//   image_encoder          pixel_values [images, C, H, W] -> image_features [images, patches, F]
//                          (the vision tower up to the selected layer, the feature select
//                          strategy applied: LLaVA drops the class token)
//   multi_modal_projector  image_features -> image_embeds [images, patches, hidden]
//   language_model         inputs_embeds [b, s, hidden] (+ StaticCache) -> last_hidden_state
//   lm_head                hidden [b, s, hidden] -> logits [b, s, vocab]
//   decode                 forward(input_ids, StaticCache) -> logits: the text-only step
//
// The merge between the projector and the language model (the image tokens' rows of the
// text embeddings replaced by image_embeds, in order: transformers' masked_scatter) is
// glue outside the graphs, merge_image_features below; the runtime looks the text
// embeddings up in the decode component's table (embed_tokens_weight()).
#pragma once

#include "ingot/models/model.h"

namespace ingot::models {

// What the image encoder takes: pixel_values [images, channels, height, width].
struct ImageInput {
  int64_t channels = 3, height = 0, width = 0;
};

class VisionLanguageModel : public PretrainedModel {
 public:
  using PretrainedModel::PretrainedModel;
  virtual Tensor encode_images(const Tensor& pixel_values) = 0;
  virtual Tensor project(const Tensor& image_features) = 0;
  virtual Tensor embed(const Tensor& input_ids) = 0;
  // The language model over embeddings: the final-normed hidden state.
  virtual Tensor language_model(const Tensor& inputs_embeds, nn::Cache* cache) = 0;
  virtual Tensor lm_head(const Tensor& hidden) = 0;
  virtual int64_t image_token_id() const = 0;
  virtual ImageInput image_input() const = 0;
  // Image tokens (rows of image_embeds) per image.
  virtual int64_t tokens_per_image() const = 0;
  // The state-dict name of the text embedding table.
  virtual std::string embed_tokens_weight() const = 0;
};

// `text_embeds` [1, s, hidden] with the rows where `input_ids` [1, s] == image_token_id
// replaced, in order, by the rows of `image_embeds` [images, patches, hidden] (a new
// tensor). ValueError naming both counts when the prompt's image tokens and the image
// features differ in number.
Tensor merge_image_features(const Tensor& text_embeds, const Tensor& input_ids,
                            const Tensor& image_embeds, int64_t image_token_id);

}  // namespace ingot::models
