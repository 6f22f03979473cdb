// Qwen2-VL's vision transformer with its patch merger (transformers'
// Qwen2VisionTransformerPretrainedModel), the image tower of Qwen2VLForConditionalGeneration;
// the merger is its projector, folded in (so there is no multi_modal_projector component).
// Names under its prefix (`visual.`): patch_embed.proj.weight, blocks.N.{norm1, norm2,
// attn.{qkv, proj}, mlp.{fc1, fc2}}, merger.{ln_q, mlp.0, mlp.2}.
//
// The processor flattens each image into patches of C * T * P * P values (temporal_patch_size
// T copies of each P x P patch, transformers' patchify) ordered so that the m x m patches
// one merged token covers (m = spatial_merge_size) are consecutive. The tower takes them
// grouped by merged token, with what the runtime derives from image_grid_thw outside the
// graph (qwen2_vl_vision_inputs, transformers' get_vision_position_ids / cu_seqlens):
//
//   pixel_values         [tokens, m*m, C*T*P*P]   the processor's [patches, C*T*P*P], viewed
//   vision_position_ids  [tokens, m*m, 2] int64   each patch's (row, column) in its image grid
//   vision_segment_ids   [tokens] int64           which image (frame) a merged token belongs to
//   -> patch embedding (the stride-(T, P, P) Conv3d as a matmul)       [patches, E]
//   -> blocks: LayerNorm, attention with 2-D rotary (rows rotate the first half of each
//      head's frequencies, columns the second) only among patches of the same image
//      (transformers' cu_seqlens), LayerNorm, MLP                     [patches, E]
//   -> merger: LayerNorm, the m*m patches of a token concatenated, Linear-GELU-Linear
//                                                                       [tokens, hidden]
// `tokens` is symbolic when exported; patches = tokens * m * m.
#pragma once

#include "ingot/models/config.h"
#include "ingot/nn/layers.h"
#include "ingot/nn/module.h"
#include "ingot/nn/rotary.h"

namespace ingot::models {

struct Qwen2VisionConfig {
  int64_t depth = 0, embed_dim = 0, hidden_size = 0, num_heads = 0, mlp_ratio = 4;
  int64_t in_channels = 3, patch_size = 14, temporal_patch_size = 2, spatial_merge_size = 2;
  double rope_theta = 10000.0;
  std::string hidden_act = "quick_gelu";
  static Qwen2VisionConfig from_config(const ConfigReader& c);
  int64_t head_dim() const { return embed_dim / num_heads; }
  // Values per flattened patch: C * T * P * P.
  int64_t patch_dim() const { return in_channels * temporal_patch_size * patch_size * patch_size; }
  int64_t merge_area() const { return spatial_merge_size * spatial_merge_size; }
};

class Qwen2VisionBlock;

class Qwen2VisionTower : public nn::Module {
 public:
  Qwen2VisionTower(const Qwen2VisionConfig& c, DType dtype);
  // The shapes above -> image embeddings [tokens, hidden]. ShapeError naming the input
  // when a shape does not fit the config.
  Tensor forward(const Tensor& pixel_values, const Tensor& vision_position_ids,
                 const Tensor& vision_segment_ids) const;
  // The blocks' output before the merger, [patches, E] (for tests against transformers'
  // last_hidden_state).
  Tensor encode(const Tensor& pixel_values, const Tensor& vision_position_ids,
                const Tensor& vision_segment_ids) const;
  const Qwen2VisionConfig& config() const { return c_; }

 private:
  Qwen2VisionConfig c_;
  Tensor* patch_weight_;  // patch_embed.proj.weight [E, C, T, P, P]
  std::shared_ptr<nn::RotaryEmbedding> rotary_;
  std::shared_ptr<nn::ModuleList> blocks_;
  std::shared_ptr<nn::LayerNorm> ln_q_;
  std::shared_ptr<nn::Linear> mlp0_, mlp2_;
};

// The side inputs of one batch of images, from image_grid_thw (computed outside the graph).
struct Qwen2VisionInputs {
  Tensor vision_position_ids;             // [tokens, m*m, 2] int64
  Tensor vision_segment_ids;              // [tokens] int64
  std::vector<int64_t> tokens_per_image;  // t * h * w / (m*m) each
};

// image_grid_thw [images, 3] int64 (the processor's (t, h, w) patches per image) -> the
// inputs above, in transformers' order (per image, per frame, merge blocks row-major, the
// m x m patches of a block row-major). ShapeError / ValueError naming image_grid_thw when
// it is not [images, 3] of positive sizes with h and w multiples of `merge`.
Qwen2VisionInputs qwen2_vl_vision_inputs(const Tensor& image_grid_thw, int64_t merge);

}  // namespace ingot::models
