#include "ingot/tune/sdpa.h"

#include "ingot/ops/functional.h"

namespace ingot::tune {

SDPA::SDPA(int64_t num_kv_heads, int64_t num_heads, int64_t head_dim, int64_t q_per_kv,
           double attn_dropout, bool is_causal, bool has_kv_cache)
    : SDPA("SDPA", num_kv_heads, num_heads, head_dim, q_per_kv, attn_dropout, is_causal,
           has_kv_cache) {}

SDPA::SDPA(std::string type_name, int64_t num_kv_heads, int64_t num_heads, int64_t head_dim,
           int64_t q_per_kv, double attn_dropout, bool is_causal, bool has_kv_cache)
    : nn::Module(std::move(type_name)),
      num_kv_heads_(num_kv_heads),
      num_heads_(num_heads),
      head_dim_(head_dim),
      q_per_kv_(q_per_kv),
      attn_dropout_(attn_dropout),
      is_causal_(is_causal),
      has_kv_cache_(has_kv_cache) {
  INGOT_CHECK(num_kv_heads > 0 && num_kv_heads * q_per_kv == num_heads, ValueError,
              "[{}] num_heads ({}) must equal num_kv_heads ({}) * q_per_kv ({})", this->type_name(),
              num_heads, num_kv_heads, q_per_kv);
}

Tensor SDPA::forward(const Tensor& q, const Tensor& k, const Tensor& v, const SymInt& bsz,
                     const SymInt& seq_len, const Tensor& mask) const {
  INGOT_CHECK(attn_dropout_ == 0.0, NotSupportedError,
              "[{}] attention dropout ({}) is not supported; build the attention in eval mode",
              type_name(), attn_dropout_);
  Tensor qt = transpose(q, 1, 2);  // [b, n_h, s, h_d]
  Tensor kt = transpose(k, 1, 2);  // [b, n_kv, s_kv, h_d]
  Tensor vt = transpose(v, 1, 2);
  if (num_heads_ != num_kv_heads_) {  // -> [b, n_h, s_kv, h_d]
    const SymIntList expanded{-1, -1, SymInt(q_per_kv_), -1, -1};
    kt = flatten(expand(unsqueeze(kt, 2), expanded), 1, 2);
    vt = flatten(expand(unsqueeze(vt, 2), expanded), 1, 2);
  }
  std::optional<Tensor> attn_mask;
  if (mask.defined()) attn_mask = unsqueeze(mask, 1);  // [b, 1, s, s_kv]
  Tensor out = scaled_dot_product_attention(qt, kt, vt, attn_mask, use_causal(mask));
  // [b, s, n_h * h_d]; explicit sizes, as -1 over a symbolic element count costs a guard.
  return reshape(transpose(out, 1, 2), {bsz, seq_len, SymInt(num_heads_ * head_dim_)});
}

}  // namespace ingot::tune
