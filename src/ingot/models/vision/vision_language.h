// Vision-language models (LLaVA, Qwen2-VL): a PretrainedModel whose forward also takes
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
// Qwen2-VL (patch_input()): the image encoder takes flattened patches with side inputs
// derived from image_grid_thw and returns projected embeddings (its merger is the
// projector: has_projector() false); the language model takes M-RoPE position_ids
// [3, 1, tokens] (mrope_position_ids) and the decode step rope_deltas [1, 1].
//
// The merge between the projector and the language model (the image tokens' rows of the
// text embeddings replaced by image_embeds, in order: transformers' masked_scatter) is
// glue outside the graphs, merge_image_features below; the runtime looks the text
// embeddings up in the decode component's table (embed_tokens_weight()).
#pragma once

#include <optional>

#include "ingot/models/model.h"

namespace ingot::models {

// What the image encoder takes: pixel_values [images, channels, height, width].
struct ImageInput {
  int64_t channels = 3, height = 0, width = 0;
};

// What a patch-input image encoder (Qwen2-VL) takes: pixel_values [tokens, merge^2,
// patch_dim] (the processor's [patches, patch_dim] viewed), vision_position_ids
// [tokens, merge^2, 2] and vision_segment_ids [tokens] (models/vision/qwen2_vl_vision.h).
struct PatchInput {
  int64_t patch_dim = 0;           // C * temporal_patch_size * patch_size^2
  int64_t spatial_merge_size = 0;  // merge: merge x merge patches per image token
};

class VisionLanguageModel : public PretrainedModel {
 public:
  using PretrainedModel::PretrainedModel;
  // pixel_values [images, C, H, W] -> features (LLaVA). A patch-input model's image
  // encoder is encode_patches instead.
  virtual Tensor encode_images(const Tensor& pixel_values) = 0;
  virtual Tensor project(const Tensor& image_features) = 0;
  // False when encode_images / encode_patches already give the projected embeddings
  // (Qwen2-VL's merger): no multi_modal_projector component.
  virtual bool has_projector() const { return true; }
  // Set for a patch-input model (Qwen2-VL); then encode_patches is its image encoder:
  // (pixel_values, vision_position_ids, vision_segment_ids) as PatchInput says ->
  // image_embeds [tokens, hidden].
  virtual std::optional<PatchInput> patch_input() const { return std::nullopt; }
  virtual Tensor encode_patches(const Tensor& pixel_values, const Tensor& vision_position_ids,
                                const Tensor& vision_segment_ids);
  // M-RoPE models: language_model takes position_ids [3, 1, tokens] and decode takes
  // rope_deltas [1, 1] (ModelInputs::rope_deltas).
  virtual bool multimodal_rope() const { return false; }
  virtual Tensor embed(const Tensor& input_ids) = 0;
  // The language model over embeddings: the final-normed hidden state. `position_ids`
  // undefined (default positions) or, for an M-RoPE model, [3, 1, tokens].
  virtual Tensor language_model(const Tensor& inputs_embeds, const Tensor& position_ids,
                                nn::Cache* cache) = 0;
  virtual Tensor lm_head(const Tensor& hidden) = 0;
  virtual int64_t image_token_id() const = 0;
  virtual ImageInput image_input() const = 0;
  // Image tokens (rows of image_embeds) per image; 0 when it depends on the image's size
  // (Qwen2-VL: t * h * w / merge^2 of its image_grid_thw row).
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

// M-RoPE positions (transformers' Qwen2VLModel.get_rope_index, batch 1): text tokens count
// on from the previous position on all three rows; each run of image tokens takes the next
// image's (t, h / merge, w / merge) grid positions offset by the position it starts at,
// and the text after it starts max(h, w) / merge later.
struct MropePositions {
  Tensor position_ids;     // [3, 1, tokens] int64
  int64_t rope_delta = 0;  // max position + 1 - tokens: added to later positions
};
// input_ids [1, tokens]; image_grid_thw [images, 3]. ValueError naming both when a run of
// image tokens does not match its image's t * h * w / merge^2 tokens or the runs and the
// images differ in number.
MropePositions mrope_position_ids(const Tensor& input_ids, int64_t image_token_id,
                                  const Tensor& image_grid_thw, int64_t merge);

}  // namespace ingot::models
