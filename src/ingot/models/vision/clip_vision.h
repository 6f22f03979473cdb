// CLIP's vision transformer (transformers' CLIPVisionTransformer), the image tower of
// LLaVA. Names under its prefix: embeddings.{class_embedding, patch_embedding.weight,
// position_embedding.weight}, pre_layrnorm, encoder.layers.N.{layer_norm1,
// self_attn.{q,k,v,out}_proj, layer_norm2, mlp.{fc1,fc2}}, post_layernorm.
//
//   pixel_values [images, C, H, W]
//   -> patches: the stride-p convolution as a matmul over [images, (H/p)(W/p), C p p]
//   -> [class token, patches] + position embeddings, pre_layrnorm   = hidden_states[0]
//   -> pre-norm encoder layers (bidirectional attention, quick-gelu MLP) = hidden_states[k]
#pragma once

#include "ingot/models/config.h"
#include "ingot/nn/layers.h"
#include "ingot/nn/module.h"

namespace ingot::models {

struct ClipVisionConfig {
  int64_t hidden_size = 0, intermediate_size = 0, num_layers = 0, num_heads = 0;
  int64_t image_size = 0, patch_size = 0, num_channels = 3;
  double layer_norm_eps = 1e-5;
  std::string hidden_act = "quick_gelu";
  static ClipVisionConfig from_config(const ConfigReader& c);
  int64_t num_patches() const { return (image_size / patch_size) * (image_size / patch_size); }
};

class ClipEncoderLayer : public nn::Module {
 public:
  ClipEncoderLayer(const ClipVisionConfig& c, DType dtype);
  Tensor forward(const Tensor& x) const;  // [images, tokens, hidden] -> same

 private:
  ClipVisionConfig c_;
  std::shared_ptr<nn::LayerNorm> layer_norm1_, layer_norm2_;
  std::shared_ptr<nn::Linear> q_proj_, k_proj_, v_proj_, out_proj_, fc1_, fc2_;
};

class ClipVisionEmbeddings;  // class token, patch convolution, position embeddings

class ClipVisionTower : public nn::Module {
 public:
  ClipVisionTower(const ClipVisionConfig& c, DType dtype);
  // hidden_states[layers]: the embeddings after pre_layrnorm (layers = 0) or the output
  // of encoder layer `layers` - 1. pixel_values [images, C, H, W] with H = W = image_size
  // -> [images, 1 + patches, hidden].
  Tensor hidden_state(const Tensor& pixel_values, int64_t layers) const;
  const ClipVisionConfig& config() const { return c_; }

 private:
  ClipVisionConfig c_;
  std::shared_ptr<ClipVisionEmbeddings> embeddings_;
  std::shared_ptr<nn::LayerNorm> pre_layrnorm_, post_layernorm_;
  std::shared_ptr<nn::ModuleList> layers_;
};

}  // namespace ingot::models
