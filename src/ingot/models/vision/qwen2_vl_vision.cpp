#include "ingot/models/vision/qwen2_vl_vision.h"

#include <cmath>

#include "ingot/nn/attention.h"
#include "ingot/ops/functional.h"

namespace ingot::models {

Qwen2VisionConfig Qwen2VisionConfig::from_config(const ConfigReader& c) {
  Qwen2VisionConfig v;
  v.depth = c.get_int("depth", 32);
  v.embed_dim = c.get_int("embed_dim", 1280);
  v.hidden_size = c.get_int("hidden_size", 3584);
  v.num_heads = c.has("num_heads") ? c.get_int("num_heads") : c.get_int("num_attention_heads", 16);
  v.mlp_ratio = c.get_int("mlp_ratio", 4);
  v.in_channels = c.get_int("in_channels", 3);
  v.patch_size = c.get_int("patch_size", 14);
  v.temporal_patch_size = c.get_int("temporal_patch_size", 2);
  v.spatial_merge_size = c.get_int("spatial_merge_size", 2);
  v.hidden_act = c.get_string("hidden_act", "quick_gelu");
  if (v.hidden_act != "quick_gelu") nn::check_activation(v.hidden_act);
  v.rope_theta = c.get_double("rope_theta", 10000.0);
  if (c.has("rope_parameters")) {  // {"rope_type": "axial", "rope_theta": ...}
    const ConfigReader rope = c.child("rope_parameters");
    const std::string type = rope.get_string("rope_type", "axial");
    INGOT_CHECK(type == "axial" || type == "default", NotSupportedError,
                "[config] '{}': the vision rotary must be axial, got rope_type '{}'", c.origin(),
                type);
    v.rope_theta = rope.get_double("rope_theta", v.rope_theta);
  }
  INGOT_CHECK(v.num_heads > 0 && v.embed_dim % v.num_heads == 0 && v.head_dim() % 4 == 0, IoError,
              "[config] '{}': embed_dim {} must be num_heads {} heads of a multiple of 4 (the "
              "2-D rotary splits each head in four)",
              c.origin(), v.embed_dim, v.num_heads);
  INGOT_CHECK(v.patch_size > 0 && v.temporal_patch_size > 0 && v.spatial_merge_size > 0, IoError,
              "[config] '{}': patch_size, temporal_patch_size and spatial_merge_size must be > 0",
              c.origin());
  return v;
}

namespace {

// x * sigmoid(1.702 x), transformers' QuickGELUActivation.
Tensor quick_gelu(const Tensor& x) {
  return mul(x, sigmoid(mul(x, 1.702)));
}

// cat(-x2, x1) over the last dim, x = [x1, x2].
Tensor rotate_half(const Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return cat({neg(slice(x, -1, half, std::nullopt)), slice(x, -1, 0, half)}, -1);
}

// transformers' apply_rotary_pos_emb_vision: in float32, back to x's dtype.
// x [patches, heads, hd]; cos, sin [patches, 1, hd] float32.
Tensor rotate(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  Tensor f = to(x, DType::F32);
  return to(add(mul(f, cos), mul(rotate_half(f), sin)), x.dtype());
}

// Conv3d's weight [E, C, T, P, P] without bias (the patch embedding).
class Conv3dWeight : public nn::Module {
 public:
  Conv3dWeight(const Qwen2VisionConfig& c, DType dtype) : nn::Module("Conv3d") {
    weight_ = register_parameter(
        "weight", nn::placeholder({c.embed_dim, c.in_channels, c.temporal_patch_size, c.patch_size,
                                   c.patch_size},
                                  dtype));
  }
  Tensor& weight() const { return *weight_; }

 private:
  Tensor* weight_;
};

}  // namespace

class Qwen2VisionBlock : public nn::Module {
 public:
  Qwen2VisionBlock(const Qwen2VisionConfig& c, DType dtype)
      : nn::Module("Qwen2VLVisionBlock"), c_(c) {
    const int64_t e = c.embed_dim;
    norm1_ = register_module("norm1", std::make_shared<nn::LayerNorm>(e, 1e-6, true, dtype));
    norm2_ = register_module("norm2", std::make_shared<nn::LayerNorm>(e, 1e-6, true, dtype));
    auto attn = register_module("attn", std::make_shared<nn::Container>("VisionAttention"));
    qkv_ = attn->add("qkv", std::make_shared<nn::Linear>(e, 3 * e, true, dtype));
    proj_ = attn->add("proj", std::make_shared<nn::Linear>(e, e, true, dtype));
    auto mlp = register_module("mlp", std::make_shared<nn::Container>("VisionMlp"));
    fc1_ = mlp->add("fc1", std::make_shared<nn::Linear>(e, e * c.mlp_ratio, true, dtype));
    fc2_ = mlp->add("fc2", std::make_shared<nn::Linear>(e * c.mlp_ratio, e, true, dtype));
  }

  // x [n, E]; cos, sin [n, 1, hd] float32; mask [n, n] bool (same image) -> [n, E]
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask) const {
    const SymInt n = x.sym_size(0);
    const int64_t heads = c_.num_heads, hd = c_.head_dim();
    Tensor qkv = reshape(qkv_->forward(norm1_->forward(x)),
                         {n, SymInt(3), SymInt(heads), SymInt(hd)});  // [n, 3, heads, hd]
    auto part = [&](int64_t i) { return select(qkv, 1, i); };         // [n, heads, hd]
    auto batched = [&](const Tensor& t) {
      return unsqueeze(transpose(t, 0, 1), 0);
    };  // [1, heads, n, hd]
    Tensor q = batched(rotate(part(0), cos, sin));
    Tensor k = batched(rotate(part(1), cos, sin));
    Tensor v = batched(part(2));
    Tensor a = scaled_dot_product_attention(q, k, v, mask, false, 1.0 / std::sqrt(double(hd)));
    a = reshape(transpose(a, 1, 2), {n, SymInt(c_.embed_dim)});  // [n, E]
    Tensor h = add(x, proj_->forward(a));
    Tensor m = fc1_->forward(norm2_->forward(h));
    m = c_.hidden_act == "quick_gelu" ? quick_gelu(m) : nn::activation(c_.hidden_act, m);
    return add(h, fc2_->forward(m));
  }

 private:
  Qwen2VisionConfig c_;
  std::shared_ptr<nn::LayerNorm> norm1_, norm2_;
  std::shared_ptr<nn::Linear> qkv_, proj_, fc1_, fc2_;
};

Qwen2VisionTower::Qwen2VisionTower(const Qwen2VisionConfig& c, DType dtype)
    : nn::Module("Qwen2VisionTransformerPretrainedModel"), c_(c) {
  auto patch = register_module("patch_embed", std::make_shared<nn::Container>("PatchEmbed"));
  patch_weight_ = &patch->add("proj", std::make_shared<Conv3dWeight>(c, dtype))->weight();
  // Axial rotary: head_dim / 2 channels per axis, i.e. RotaryEmbedding over head_dim / 2
  // (inv_freq = theta^(-2i / (head_dim / 2)), transformers' compute_axial_rope_parameters).
  nn::RopeConfig rope;
  rope.theta = c.rope_theta;
  rotary_ = register_module("rotary_pos_emb",
                            std::make_shared<nn::RotaryEmbedding>(c.head_dim() / 2, rope, 1 << 20));
  blocks_ = register_module("blocks", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.depth; ++i)
    blocks_->append(std::make_shared<Qwen2VisionBlock>(c, dtype));
  auto merger = register_module("merger", std::make_shared<nn::Container>("PatchMerger"));
  const int64_t merged = c.embed_dim * c.merge_area();
  ln_q_ = merger->add("ln_q", std::make_shared<nn::LayerNorm>(c.embed_dim, 1e-6, true, dtype));
  auto mlp = merger->add("mlp", std::make_shared<nn::Container>("Sequential"));
  mlp0_ = mlp->add("0", std::make_shared<nn::Linear>(merged, merged, true, dtype));
  mlp2_ = mlp->add("2", std::make_shared<nn::Linear>(merged, c.hidden_size, true, dtype));
}

Tensor Qwen2VisionTower::encode(const Tensor& pixel_values, const Tensor& positions,
                                const Tensor& segments) const {
  const int64_t m2 = c_.merge_area(), d = c_.patch_dim();
  INGOT_CHECK(pixel_values.dim() == 3 && pixel_values.size(1) == m2 && pixel_values.size(2) == d,
              ShapeError,
              "[Qwen2VisionTransformer] pixel_values must be [tokens, {}, {}] (the processor's "
              "[patches, {}] grouped by merged token), got {}",
              m2, d, d, pixel_values.shape_string());
  INGOT_CHECK(positions.dim() == 3 && positions.size(1) == m2 && positions.size(2) == 2, ShapeError,
              "[Qwen2VisionTransformer] vision_position_ids must be [tokens, {}, 2], got {}", m2,
              positions.shape_string());
  INGOT_CHECK(segments.dim() == 1, ShapeError,
              "[Qwen2VisionTransformer] vision_segment_ids must be [tokens], got {}",
              segments.shape_string());
  const SymInt tokens = pixel_values.sym_size(0);
  const SymInt n = tokens * m2;
  const int64_t hd = c_.head_dim();
  // The Conv3d with kernel = stride = (T, P, P) and no bias, over [n, C*T*P*P].
  Tensor x = reshape(pixel_values, {n, SymInt(d)});
  x = linear(to(x, patch_weight_->dtype()),
             reshape(*patch_weight_, {SymInt(c_.embed_dim), SymInt(d)}));
  // cos / sin [n, 1, hd]: the row's frequencies, then the column's, the whole repeated.
  auto [c2, s2] = rotary_->forward(reshape(positions, {n, SymInt(2)}), DType::F32);  // [n, 2, hd/2]
  auto axial = [&](const Tensor& t) {
    Tensor f = reshape(slice(t, -1, 0, hd / 4), {n, SymInt(hd / 2)});  // [f_row, f_col]
    return unsqueeze(cat({f, f}, -1), 1);
  };
  Tensor cos = axial(c2), sin = axial(s2);
  // Attention within an image: patch i sees patch j iff their tokens' segments agree.
  Tensor seg = reshape(expand(unsqueeze(segments, 1), {tokens, SymInt(m2)}), {n});  // [n]
  Tensor mask = eq(unsqueeze(seg, 1), unsqueeze(seg, 0));                           // [n, n]
  for (size_t i = 0; i < blocks_->size(); ++i)
    x = blocks_->at<Qwen2VisionBlock>(i).forward(x, cos, sin, mask);
  return x;
}

Tensor Qwen2VisionTower::forward(const Tensor& pixel_values, const Tensor& positions,
                                 const Tensor& segments) const {
  Tensor x = ln_q_->forward(encode(pixel_values, positions, segments));  // [n, E]
  x = reshape(x, {pixel_values.sym_size(0), SymInt(c_.embed_dim * c_.merge_area())});
  return mlp2_->forward(gelu(mlp0_->forward(x)));  // [tokens, hidden]
}

Qwen2VisionInputs qwen2_vl_vision_inputs(const Tensor& image_grid_thw, int64_t merge) {
  INGOT_CHECK(image_grid_thw.defined() && image_grid_thw.dim() == 2 &&
                  image_grid_thw.size(1) == 3 && image_grid_thw.size(0) > 0,
              ShapeError,
              "[Qwen2-VL] image_grid_thw must be [images, 3] (t, h, w patches per image), got {}",
              image_grid_thw.defined() ? image_grid_thw.shape_string() : "nothing");
  INGOT_CHECK(image_grid_thw.dtype() == DType::I64 || image_grid_thw.dtype() == DType::I32,
              DTypeError, "[Qwen2-VL] image_grid_thw must be int64 (or int32), got {}",
              dtype_name(image_grid_thw.dtype()));
  Tensor grid = contiguous(to(image_grid_thw, DType::I64));
  const int64_t* g = grid.data<int64_t>();
  std::vector<int64_t> pos, seg;
  Qwen2VisionInputs out;
  int64_t segment = 0;
  for (int64_t i = 0; i < grid.size(0); ++i) {
    const int64_t t = g[3 * i], h = g[3 * i + 1], w = g[3 * i + 2];
    INGOT_CHECK(t > 0 && h > 0 && w > 0 && h % merge == 0 && w % merge == 0, ValueError,
                "[Qwen2-VL] image_grid_thw row {} is ({}, {}, {}); t, h, w must be positive and "
                "h, w multiples of spatial_merge_size {}",
                i, t, h, w, merge);
    out.tokens_per_image.push_back(t * h * w / (merge * merge));
    for (int64_t f = 0; f < t; ++f, ++segment) {  // each frame attends on its own
      for (int64_t bh = 0; bh < h / merge; ++bh) {
        for (int64_t bw = 0; bw < w / merge; ++bw) {
          seg.push_back(segment);
          for (int64_t mh = 0; mh < merge; ++mh) {
            for (int64_t mw = 0; mw < merge; ++mw) {
              pos.push_back(bh * merge + mh);
              pos.push_back(bw * merge + mw);
            }
          }
        }
      }
    }
  }
  const int64_t tokens = int64_t(seg.size());
  out.vision_position_ids = Tensor::from_vector(pos, {tokens, merge * merge, 2});
  out.vision_segment_ids = Tensor::from_vector(seg, {tokens});
  return out;
}

}  // namespace ingot::models
