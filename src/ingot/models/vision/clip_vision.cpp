#include "ingot/models/vision/clip_vision.h"

#include <cmath>

#include "ingot/nn/attention.h"
#include "ingot/ops/functional.h"

namespace ingot::models {

ClipVisionConfig ClipVisionConfig::from_config(const ConfigReader& c) {
  ClipVisionConfig v;
  v.hidden_size = c.get_int("hidden_size", 768);
  v.intermediate_size = c.get_int("intermediate_size", 3072);
  v.num_layers = c.get_int("num_hidden_layers", 12);
  v.num_heads = c.get_int("num_attention_heads", 12);
  v.image_size = c.get_int("image_size", 224);
  v.patch_size = c.get_int("patch_size", 32);
  v.num_channels = c.get_int("num_channels", 3);
  v.layer_norm_eps = c.get_double("layer_norm_eps", 1e-5);
  v.hidden_act = c.get_string("hidden_act", "quick_gelu");
  if (v.hidden_act != "quick_gelu") nn::check_activation(v.hidden_act);
  INGOT_CHECK(v.num_heads > 0 && v.hidden_size % v.num_heads == 0, IoError,
              "[config] '{}': hidden_size {} is not a multiple of num_attention_heads {}",
              c.origin(), v.hidden_size, v.num_heads);
  INGOT_CHECK(v.patch_size > 0 && v.image_size % v.patch_size == 0, IoError,
              "[config] '{}': image_size {} is not a multiple of patch_size {}", c.origin(),
              v.image_size, v.patch_size);
  return v;
}

namespace {

// x * sigmoid(1.702 x), transformers' QuickGELUActivation.
Tensor quick_gelu(const Tensor& x) {
  return mul(x, sigmoid(mul(x, 1.702)));
}

class ClipPatchEmbedding : public nn::Module {
 public:
  ClipPatchEmbedding(const ClipVisionConfig& c, DType dtype) : nn::Module("Conv2d") {
    weight_ = register_parameter(
        "weight",
        nn::placeholder({c.hidden_size, c.num_channels, c.patch_size, c.patch_size}, dtype));
  }
  Tensor& weight() const { return *weight_; }

 private:
  Tensor* weight_;
};

}  // namespace

class ClipVisionEmbeddings : public nn::Module {
 public:
  ClipVisionEmbeddings(const ClipVisionConfig& c, DType dtype)
      : nn::Module("CLIPVisionEmbeddings"), c_(c) {
    class_embedding_ =
        register_parameter("class_embedding", nn::placeholder({c.hidden_size}, dtype));
    patch_ = register_module("patch_embedding", std::make_shared<ClipPatchEmbedding>(c, dtype));
    position_ =
        register_module("position_embedding",
                        std::make_shared<nn::Embedding>(c.num_patches() + 1, c.hidden_size, dtype));
  }

  // pixel_values [n, C, H, W] -> [n, 1 + patches, hidden]
  Tensor forward(const Tensor& pixel_values) const {
    INGOT_CHECK(pixel_values.dim() == 4 && pixel_values.size(1) == c_.num_channels &&
                    pixel_values.size(2) == c_.image_size && pixel_values.size(3) == c_.image_size,
                ShapeError,
                "[CLIPVisionEmbeddings] pixel_values must be [images, {}, {}, {}], got {} (resize "
                "and crop the image as the processor does)",
                c_.num_channels, c_.image_size, c_.image_size, pixel_values.shape_string());
    const SymInt n = pixel_values.sym_size(0);
    const int64_t p = c_.patch_size, g = c_.image_size / p, C = c_.num_channels;
    // The stride-p, kernel-p convolution without bias: each patch's C*p*p pixels (in the
    // kernel's (C, kh, kw) order) times the kernel flattened the same way.
    Tensor x = view(pixel_values, {n, SymInt(C), SymInt(g), SymInt(p), SymInt(g), SymInt(p)});
    x = permute(x, {0, 2, 4, 1, 3, 5});  // [n, gh, gw, C, p, p]
    x = reshape(x, {n, SymInt(g * g), SymInt(C * p * p)});
    Tensor kernel = reshape(patch_->weight(), {SymInt(c_.hidden_size), SymInt(C * p * p)});
    Tensor patches = linear(x, kernel);  // [n, patches, hidden]
    Tensor cls = expand(view(*class_embedding_, {SymInt(1), SymInt(1), SymInt(c_.hidden_size)}),
                        {n, SymInt(1), SymInt(c_.hidden_size)});
    Tensor e = cat({cls, patches}, 1);  // [n, 1 + patches, hidden]
    return add(e, unsqueeze(position_->weight(), 0));
  }

 private:
  ClipVisionConfig c_;
  Tensor* class_embedding_;
  std::shared_ptr<ClipPatchEmbedding> patch_;
  std::shared_ptr<nn::Embedding> position_;
};

ClipEncoderLayer::ClipEncoderLayer(const ClipVisionConfig& c, DType dtype)
    : nn::Module("CLIPEncoderLayer"), c_(c) {
  auto attn = register_module("self_attn", std::make_shared<nn::Container>("CLIPAttention"));
  auto proj = [&](const char* name) {
    return attn->add(name, std::make_shared<nn::Linear>(c.hidden_size, c.hidden_size, true, dtype));
  };
  k_proj_ = proj("k_proj");
  v_proj_ = proj("v_proj");
  q_proj_ = proj("q_proj");
  out_proj_ = proj("out_proj");
  layer_norm1_ = register_module(
      "layer_norm1", std::make_shared<nn::LayerNorm>(c.hidden_size, c.layer_norm_eps, true, dtype));
  auto mlp = register_module("mlp", std::make_shared<nn::Container>("CLIPMLP"));
  fc1_ = mlp->add("fc1",
                  std::make_shared<nn::Linear>(c.hidden_size, c.intermediate_size, true, dtype));
  fc2_ = mlp->add("fc2",
                  std::make_shared<nn::Linear>(c.intermediate_size, c.hidden_size, true, dtype));
  layer_norm2_ = register_module(
      "layer_norm2", std::make_shared<nn::LayerNorm>(c.hidden_size, c.layer_norm_eps, true, dtype));
}

Tensor ClipEncoderLayer::forward(const Tensor& x) const {
  const SymInt n = x.sym_size(0), s = x.sym_size(1);
  const int64_t hd = c_.hidden_size / c_.num_heads;
  auto heads = [&](const Tensor& t) {  // [n, s, hidden] -> [n, heads, s, hd]
    return transpose(view(t, {n, s, SymInt(c_.num_heads), SymInt(hd)}), 1, 2);
  };
  Tensor h = layer_norm1_->forward(x);
  Tensor a = scaled_dot_product_attention(heads(q_proj_->forward(h)), heads(k_proj_->forward(h)),
                                          heads(v_proj_->forward(h)), std::nullopt, false,
                                          1.0 / std::sqrt(double(hd)));
  a = reshape(transpose(a, 1, 2), {n, s, SymInt(c_.hidden_size)});
  Tensor r = add(x, out_proj_->forward(a));
  Tensor m = fc1_->forward(layer_norm2_->forward(r));
  m = c_.hidden_act == "quick_gelu" ? quick_gelu(m) : nn::activation(c_.hidden_act, m);
  return add(r, fc2_->forward(m));
}

ClipVisionTower::ClipVisionTower(const ClipVisionConfig& c, DType dtype)
    : nn::Module("CLIPVisionTransformer"), c_(c) {
  embeddings_ = register_module("embeddings", std::make_shared<ClipVisionEmbeddings>(c, dtype));
  pre_layrnorm_ = register_module(
      "pre_layrnorm",
      std::make_shared<nn::LayerNorm>(c.hidden_size, c.layer_norm_eps, true, dtype));
  auto encoder = register_module("encoder", std::make_shared<nn::Container>("CLIPEncoder"));
  layers_ = encoder->add("layers", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.num_layers; ++i)
    layers_->append(std::make_shared<ClipEncoderLayer>(c, dtype));
  // Only the pooled output reads it (not LLaVA), but checkpoints hold it.
  post_layernorm_ = register_module(
      "post_layernorm",
      std::make_shared<nn::LayerNorm>(c.hidden_size, c.layer_norm_eps, true, dtype));
}

Tensor ClipVisionTower::hidden_state(const Tensor& pixel_values, int64_t layers) const {
  INGOT_CHECK(layers >= 0 && layers <= c_.num_layers, ValueError,
              "[CLIPVisionTransformer] hidden state {} does not exist (0 .. {} layers)", layers,
              c_.num_layers);
  Tensor x = pre_layrnorm_->forward(embeddings_->forward(pixel_values));
  for (int64_t i = 0; i < layers; ++i) x = layers_->at<ClipEncoderLayer>(size_t(i)).forward(x);
  return x;
}

}  // namespace ingot::models
