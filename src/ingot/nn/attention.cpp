#include "ingot/nn/attention.h"

#include <limits>

#include "ingot/nn/rotary.h"
#include "ingot/ops/functional.h"

namespace ingot::nn {

Tensor causal_mask(const Tensor& query_positions, const SymInt& key_length,
                   const Tensor& attention_mask, std::optional<int64_t> sliding_window) {
  INGOT_CHECK(query_positions.dim() == 1, ShapeError,
              "[causal_mask] query_positions must be [q], got {}", query_positions.shape_string());
  const SymInt q = query_positions.sym_size(0);
  if (attention_mask.defined() && attention_mask.dim() == 4) {
    const Tensor& m = attention_mask;
    INGOT_CHECK((m.sym_size(2) == q).guard_bool() && (m.sym_size(3) == key_length).guard_bool(),
                ShapeError,
                "[causal_mask] a 4-D attention_mask must be [batch or 1, 1, {}, {}] (queries, key "
                "slots), got {}",
                q.str(), key_length.str(), m.shape_string());
    return m.dtype() == DType::Bool ? m : ne(m, 0);
  }
  Tensor q_pos = unsqueeze(query_positions, 1);            // [q, 1]
  Tensor k_pos = unsqueeze(arange_symint(key_length), 0);  // [1, kv]
  Tensor allowed = le(k_pos, q_pos);                       // [q, kv]
  if (sliding_window) allowed = logical_and(allowed, gt(k_pos, sub(q_pos, *sliding_window)));
  allowed = unsqueeze(unsqueeze(allowed, 0), 0);  // [1, 1, q, kv]
  if (!attention_mask.defined()) return allowed;
  INGOT_CHECK(attention_mask.dim() == 2 && (attention_mask.sym_size(1) == key_length).guard_bool(),
              ShapeError,
              "[causal_mask] attention_mask has shape {}; expected [batch, {}] over the key slots "
              "(cached + new tokens; with a StaticCache, max_cache_len) or a 4-D mask",
              attention_mask.shape_string(), key_length.str());
  return logical_and(allowed, padding_mask(attention_mask));  // [b, 1, q, kv]
}

Tensor sliding_window_mask(const Tensor& query_positions, const SymInt& key_length,
                           int64_t window) {
  INGOT_CHECK(query_positions.dim() == 1, ShapeError,
              "[sliding_window_mask] query_positions must be [q], got {}",
              query_positions.shape_string());
  Tensor q_pos = unsqueeze(query_positions, 1);            // [q, 1]
  Tensor k_pos = unsqueeze(arange_symint(key_length), 0);  // [1, kv]
  Tensor inside = gt(k_pos, sub(q_pos, window));           // [q, kv]
  return unsqueeze(unsqueeze(inside, 0), 0);               // [1, 1, q, kv]
}

Tensor padding_mask(const Tensor& attention_mask) {
  Tensor keep = ne(attention_mask, 0);      // [b, s]
  return unsqueeze(unsqueeze(keep, 1), 1);  // [b, 1, 1, s]
}

SelfAttention::SelfAttention(const AttentionConfig& c, size_t layer_index)
    : Module("SelfAttention"), config_(c), layer_index_(layer_index) {
  INGOT_CHECK(c.num_heads % c.num_kv_heads == 0, ValueError,
              "[SelfAttention] num_attention_heads {} is not a multiple of num_key_value_heads {}",
              c.num_heads, c.num_kv_heads);
  const int64_t q_dim = c.num_heads * c.head_dim, kv_dim = c.num_kv_heads * c.head_dim;
  if (c.fused_qkv) {
    qkv_proj_ = register_module(
        "qkv_proj",
        std::make_shared<Linear>(c.hidden_size, q_dim + 2 * kv_dim, c.qkv_bias, c.dtype));
  } else {
    q_proj_ = register_module("q_proj",
                              std::make_shared<Linear>(c.hidden_size, q_dim, c.qkv_bias, c.dtype));
    k_proj_ = register_module("k_proj",
                              std::make_shared<Linear>(c.hidden_size, kv_dim, c.qkv_bias, c.dtype));
    v_proj_ = register_module("v_proj",
                              std::make_shared<Linear>(c.hidden_size, kv_dim, c.qkv_bias, c.dtype));
  }
  o_proj_ = register_module("o_proj",
                            std::make_shared<Linear>(q_dim, c.hidden_size, c.output_bias, c.dtype));
  auto rms = [&](int64_t dim) {
    return std::make_shared<RMSNorm>(dim, c.rms_norm_eps, c.dtype, c.norm_weight_offset);
  };
  switch (c.qk_norm) {
    case QkNorm::kNone:
      break;
    case QkNorm::kPerHead:
      q_norm_ = register_module("q_norm", rms(c.head_dim));
      k_norm_ = register_module("k_norm", rms(c.head_dim));
      break;
    case QkNorm::kFull:
      q_norm_ = register_module("q_norm", rms(q_dim));
      k_norm_ = register_module("k_norm", rms(kv_dim));
      break;
    case QkNorm::kPerHeadLayerNorm:
      q_norm_ = register_module(
          "q_layernorm",
          std::make_shared<PerHeadLayerNorm>(c.num_heads, c.head_dim, c.rms_norm_eps, c.dtype));
      k_norm_ = register_module(
          "k_layernorm",
          std::make_shared<PerHeadLayerNorm>(c.num_kv_heads, c.head_dim, c.rms_norm_eps, c.dtype));
      break;
  }
}

PerHeadLayerNorm::PerHeadLayerNorm(int64_t heads, int64_t head_dim, double eps, DType dtype)
    : Normalization("PerHeadLayerNorm"), head_dim_(head_dim), eps_(eps) {
  norms_ = register_module("norms", std::make_shared<ModuleList>());
  for (int64_t h = 0; h < heads; ++h)
    norms_->append(std::make_shared<LayerNorm>(head_dim, eps, false, dtype));
}

Tensor PerHeadLayerNorm::forward(const Tensor& x) const {
  // Normalise every head's channels, then scale head H by norms.H's weight.
  std::vector<Tensor> weights;
  for (size_t h = 0; h < norms_->size(); ++h) weights.push_back(norms_->at<LayerNorm>(h).weight());
  Tensor normed = layer_norm(x, {SymInt(head_dim_)}, std::nullopt, std::nullopt, eps_);
  return mul(normed, stack(weights, 0));  // [b, s, heads, hd] * [heads, hd]
}

Tensor softcapped_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                            double scale, double softcap) {
  const SymInt b = k.sym_size(0), kv = k.sym_size(2);
  const int64_t heads = q.size(1), kv_heads = k.size(1), d = k.size(3), dv = v.size(3);
  auto repeat_kv = [&](const Tensor& t,
                       int64_t dim) {  // [b, kv_heads, kv, dim] -> [b, heads, kv, dim]
    if (heads == kv_heads) return t;
    Tensor e =
        expand(unsqueeze(t, 2), {b, SymInt(kv_heads), SymInt(heads / kv_heads), kv, SymInt(dim)});
    return reshape(e, {b, SymInt(heads), kv, SymInt(dim)});
  };
  Tensor scores = mul(matmul(q, transpose(repeat_kv(k, d), 2, 3)), scale);  // [b, h, q, kv]
  scores = mul(tanh(div(scores, softcap)), softcap);
  // A large finite negative rather than -inf, as transformers adds: a fully masked
  // (padding) query row stays finite.
  scores =
      masked_fill(to(scores, DType::F32), logical_not(mask), std::numeric_limits<float>::lowest());
  Tensor probs = to(softmax(scores, -1), q.dtype());
  return matmul(probs, repeat_kv(v, dv));  // [b, h, q, dv]
}

Tensor SelfAttention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                              const Tensor& mask, Cache* cache) const {
  const SymInt b = x.sym_size(0), s = x.sym_size(1);
  const int64_t hd = config_.head_dim;
  const int64_t q_dim = config_.num_heads * hd, kv_dim = config_.num_kv_heads * hd;
  Tensor q, k, v;  // [b, s, heads * hd]
  if (qkv_proj_) {
    Tensor qkv = qkv_proj_->forward(x);
    q = slice(qkv, -1, 0, q_dim);
    k = slice(qkv, -1, q_dim, q_dim + kv_dim);
    v = slice(qkv, -1, q_dim + kv_dim, q_dim + 2 * kv_dim);
  } else {
    q = q_proj_->forward(x);
    k = k_proj_->forward(x);
    v = v_proj_->forward(x);
  }
  if (config_.qk_norm == QkNorm::kFull) {
    q = q_norm_->forward(q);
    k = k_norm_->forward(k);
  }
  // [b, s, heads * hd] -> [b, s, heads, hd]
  q = view(q, {b, s, SymInt(config_.num_heads), SymInt(hd)});
  k = view(k, {b, s, SymInt(config_.num_kv_heads), SymInt(hd)});
  v = view(v, {b, s, SymInt(config_.num_kv_heads), SymInt(hd)});
  if (q_norm_ && config_.qk_norm != QkNorm::kFull) {
    q = q_norm_->forward(q);
    k = k_norm_->forward(k);
  }
  q = transpose(q, 1, 2);  // [b, heads, s, hd]
  k = transpose(k, 1, 2);
  v = transpose(v, 1, 2);
  if (cos.defined()) std::tie(q, k) = apply_rotary(q, k, cos, sin);
  if (cache) std::tie(k, v) = cache->update(layer_index_, k, v);
  const double scale = config_.scale.value_or(1.0 / std::sqrt(double(hd)));
  Tensor out = config_.softcap
                   ? softcapped_attention(q, k, v, mask, scale, *config_.softcap)
                   : scaled_dot_product_attention(q, k, v, mask, false, scale,
                                                  config_.num_kv_heads != config_.num_heads);
  out = reshape(transpose(out, 1, 2), {b, s, SymInt(config_.num_heads * hd)});  // [b, s, h*hd]
  return o_proj_->forward(out);
}

void check_activation(const std::string& name) {
  static const char* kKnown[] = {"silu",      "swish", "gelu", "gelu_new", "gelu_pytorch_tanh",
                                 "gelu_fast", "relu"};
  for (const char* k : kKnown) {
    if (name == k) return;
  }
  INGOT_THROW(NotSupportedError,
              "[activation] '{}' is not supported (supported: silu, swish, gelu, gelu_new, "
              "gelu_pytorch_tanh, gelu_fast, relu)",
              name);
}

Tensor activation(const std::string& name, const Tensor& x) {
  if (name == "silu" || name == "swish") return silu(x);
  if (name == "gelu") return gelu(x, "none");
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
    return gelu(x, "tanh");
  if (name == "relu") return relu(x);
  check_activation(name);
  return x;
}

GatedMLP::GatedMLP(int64_t hidden, int64_t intermediate, std::string act, bool bias, DType dtype,
                   bool fused, const std::array<const char*, 3>& names)
    : FeedForward("GatedMLP"), act_(std::move(act)), intermediate_(intermediate) {
  check_activation(act_);
  if (fused) {
    gate_up_proj_ = register_module(
        "gate_up_proj", std::make_shared<Linear>(hidden, 2 * intermediate, bias, dtype));
  } else {
    gate_proj_ =
        register_module(names[0], std::make_shared<Linear>(hidden, intermediate, bias, dtype));
    up_proj_ =
        register_module(names[1], std::make_shared<Linear>(hidden, intermediate, bias, dtype));
  }
  down_proj_ =
      register_module(names[2], std::make_shared<Linear>(intermediate, hidden, bias, dtype));
}

Tensor GatedMLP::forward(const Tensor& x) const {
  Tensor gate, up;  // [..., intermediate]
  if (gate_up_proj_) {
    Tensor both = gate_up_proj_->forward(x);
    gate = slice(both, -1, 0, intermediate_);
    up = slice(both, -1, intermediate_, 2 * intermediate_);
  } else {
    gate = gate_proj_->forward(x);
    up = up_proj_->forward(x);
  }
  return down_proj_->forward(mul(activation(act_, gate), up));
}

}  // namespace ingot::nn
