#include "ingot/nn/attention.h"

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
                "slots), got {}", q.str(), key_length.str(), m.shape_string());
    return m.dtype() == DType::Bool ? m : ne(m, 0);
  }
  Tensor q_pos = unsqueeze(query_positions, 1);                 // [q, 1]
  Tensor k_pos = unsqueeze(arange_symint(key_length), 0);       // [1, kv]
  Tensor allowed = le(k_pos, q_pos);                             // [q, kv]
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

Tensor padding_mask(const Tensor& attention_mask) {
  Tensor keep = ne(attention_mask, 0);       // [b, s]
  return unsqueeze(unsqueeze(keep, 1), 1);  // [b, 1, 1, s]
}

SelfAttention::SelfAttention(const AttentionConfig& c, size_t layer_index)
    : Module("SelfAttention"), config_(c), layer_index_(layer_index) {
  INGOT_CHECK(c.num_heads % c.num_kv_heads == 0, ValueError,
              "[SelfAttention] num_attention_heads {} is not a multiple of num_key_value_heads {}",
              c.num_heads, c.num_kv_heads);
  q_proj_ = register_module("q_proj", std::make_shared<Linear>(c.hidden_size, c.num_heads * c.head_dim, c.qkv_bias, c.dtype));
  k_proj_ = register_module("k_proj", std::make_shared<Linear>(c.hidden_size, c.num_kv_heads * c.head_dim, c.qkv_bias, c.dtype));
  v_proj_ = register_module("v_proj", std::make_shared<Linear>(c.hidden_size, c.num_kv_heads * c.head_dim, c.qkv_bias, c.dtype));
  o_proj_ = register_module("o_proj", std::make_shared<Linear>(c.num_heads * c.head_dim, c.hidden_size, c.output_bias, c.dtype));
  if (c.qk_norm) {
    q_norm_ = register_module("q_norm", std::make_shared<RMSNorm>(c.head_dim, c.rms_norm_eps, c.dtype));
    k_norm_ = register_module("k_norm", std::make_shared<RMSNorm>(c.head_dim, c.rms_norm_eps, c.dtype));
  }
}

Tensor SelfAttention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                              const Tensor& mask, Cache* cache) const {
  const SymInt b = x.sym_size(0), s = x.sym_size(1);
  const int64_t hd = config_.head_dim;
  // [b, s, heads * hd] -> [b, s, heads, hd]
  Tensor q = view(q_proj_->forward(x), {b, s, SymInt(config_.num_heads), SymInt(hd)});
  Tensor k = view(k_proj_->forward(x), {b, s, SymInt(config_.num_kv_heads), SymInt(hd)});
  Tensor v = view(v_proj_->forward(x), {b, s, SymInt(config_.num_kv_heads), SymInt(hd)});
  if (q_norm_) {
    q = q_norm_->forward(q);
    k = k_norm_->forward(k);
  }
  q = transpose(q, 1, 2);  // [b, heads, s, hd]
  k = transpose(k, 1, 2);
  v = transpose(v, 1, 2);
  std::tie(q, k) = apply_rotary(q, k, cos, sin);
  if (cache) std::tie(k, v) = cache->update(layer_index_, k, v);
  Tensor out = scaled_dot_product_attention(q, k, v, mask, false, 1.0 / std::sqrt(double(hd)),
                                            config_.num_kv_heads != config_.num_heads);
  out = reshape(transpose(out, 1, 2), {b, s, SymInt(config_.num_heads * hd)});  // [b, s, h*hd]
  return o_proj_->forward(out);
}

void check_activation(const std::string& name) {
  static const char* kKnown[] = {"silu", "swish", "gelu", "gelu_new", "gelu_pytorch_tanh",
                                 "gelu_fast", "relu"};
  for (const char* k : kKnown) {
    if (name == k) return;
  }
  INGOT_THROW(NotSupportedError,
              "[activation] '{}' is not supported (supported: silu, swish, gelu, gelu_new, "
              "gelu_pytorch_tanh, gelu_fast, relu)", name);
}

Tensor activation(const std::string& name, const Tensor& x) {
  if (name == "silu" || name == "swish") return silu(x);
  if (name == "gelu") return gelu(x, "none");
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return gelu(x, "tanh");
  if (name == "relu") return relu(x);
  check_activation(name);
  return x;
}

GatedMLP::GatedMLP(int64_t hidden, int64_t intermediate, std::string act, bool bias, DType dtype)
    : Module("GatedMLP"), act_(std::move(act)) {
  check_activation(act_);
  gate_proj_ = register_module("gate_proj", std::make_shared<Linear>(hidden, intermediate, bias, dtype));
  up_proj_ = register_module("up_proj", std::make_shared<Linear>(hidden, intermediate, bias, dtype));
  down_proj_ = register_module("down_proj", std::make_shared<Linear>(intermediate, hidden, bias, dtype));
}

Tensor GatedMLP::forward(const Tensor& x) const {
  return down_proj_->forward(mul(activation(act_, gate_proj_->forward(x)), up_proj_->forward(x)));
}

}  // namespace ingot::nn
