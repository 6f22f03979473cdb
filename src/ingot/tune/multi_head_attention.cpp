#include "ingot/tune/multi_head_attention.h"

#include <cmath>

#include "ingot/ops/functional.h"

namespace ingot::tune {

void validate_attention_args(const MultiHeadAttentionArgs& a, const std::string& api) {
  INGOT_CHECK(a.embed_dim > 0 && a.num_heads > 0 && a.num_kv_heads > 0 && a.head_dim > 0,
              ValueError,
              "[{}] embed_dim ({}), num_heads ({}), num_kv_heads ({}) and head_dim ({}) must be "
              "positive",
              api, a.embed_dim, a.num_heads, a.num_kv_heads, a.head_dim);
  INGOT_CHECK(a.num_heads % a.num_kv_heads == 0, ValueError,
              "[{}] num_heads ({}) must be divisible by num_kv_heads ({})", api, a.num_heads,
              a.num_kv_heads);
  INGOT_CHECK(a.embed_dim % a.num_heads == 0, ValueError,
              "[{}] embed_dim ({}) must be divisible by num_heads ({})", api, a.embed_dim,
              a.num_heads);
  INGOT_CHECK(a.attn_dropout >= 0.0 && a.attn_dropout <= 1.0, ValueError,
              "[{}] attn_dropout ({}) must be between 0.0 and 1.0", api, a.attn_dropout);
  INGOT_CHECK(bool(a.q_norm) == bool(a.k_norm), ValueError,
              "[{}] q and k norm must be set together (got only {})", api,
              a.q_norm ? "q_norm" : "k_norm");
  const char* missing = !a.q_proj        ? "q_proj"
                        : !a.k_proj      ? "k_proj"
                        : !a.v_proj      ? "v_proj"
                        : !a.output_proj ? "output_proj"
                                         : nullptr;
  INGOT_CHECK(missing == nullptr, ValueError, "[{}] {} is required", api, missing ? missing : "");
}

MultiHeadAttention::MultiHeadAttention(MultiHeadAttentionArgs args)
    : nn::Module("MultiHeadAttention"), args_(std::move(args)) {
  validate_attention_args(args_, type_name());
  register_module("q_proj", args_.q_proj);
  register_module("k_proj", args_.k_proj);
  register_module("v_proj", args_.v_proj);
  register_module("output_proj", args_.output_proj);
  if (args_.pos_embeddings) register_module("pos_embeddings", args_.pos_embeddings);
  if (args_.q_norm) {
    register_module("q_norm", args_.q_norm);
    register_module("k_norm", args_.k_norm);
  }
  if (args_.kv_cache) register_module("kv_cache", args_.kv_cache);
}

bool MultiHeadAttention::setup_cache(int64_t batch_size, DType dtype, int64_t max_seq_len) {
  if (args_.kv_cache) {
    fmt::print(stderr,
               "[MultiHeadAttention.setup_cache] warning: Key value caches are already setup. "
               "You cannot call setup_cache() twice. Skipping.\n");
    return false;
  }
  args_.kv_cache =
      std::make_shared<KVCache>(batch_size, max_seq_len, args_.num_kv_heads, args_.head_dim, dtype);
  register_module("kv_cache", args_.kv_cache);
  cache_enabled_ = true;
  return true;
}

void MultiHeadAttention::reset_cache() {
  INGOT_CHECK(args_.kv_cache != nullptr, ValueError,
              "[MultiHeadAttention.reset_cache] Key value caches are not setup. Call "
              "setup_cache() first.");
  args_.kv_cache->reset();
}

Tensor MultiHeadAttention::forward(const Tensor& x, const Tensor& y, const Tensor& mask,
                                   const Tensor& input_pos) const {
  INGOT_CHECK(!(is_training() && args_.attn_dropout > 0), NotSupportedError,
              "[MultiHeadAttention] attention dropout ({}) in training mode is not supported; "
              "call eval()",
              args_.attn_dropout);
  const MultiHeadAttentionArgs& a = args_;
  const SymInt b = x.sym_size(0), s_x = x.sym_size(1);
  const int64_t q_per_kv = a.num_heads / a.num_kv_heads;
  Tensor q = view(a.q_proj->forward(x), {b, s_x, SymInt(a.num_heads), SymInt(a.head_dim)});
  if (a.pos_embeddings) q = a.pos_embeddings->forward(q, input_pos);
  q = transpose(q, 1, 2);  // [b, n_h, s_x, h_d]
  if (a.q_norm) q = a.q_norm->forward(q);

  Tensor k, v;
  if (!y.defined()) {
    INGOT_CHECK(a.kv_cache != nullptr, ValueError,
                "[MultiHeadAttention] Must provide y input or use kv_cache to enable streaming "
                "decoding");
    k = a.kv_cache->k_cache();  // [b, n_kv, max_seq_len, h_d]
    v = a.kv_cache->v_cache();
  } else {
    const SymInt s_y = y.sym_size(1);
    const SymIntList shape{b, s_y, SymInt(a.num_kv_heads), SymInt(a.head_dim)};
    k = view(a.k_proj->forward(y), shape);  // [b, s_y, n_kv, h_d]
    v = view(a.v_proj->forward(y), shape);
    if (a.pos_embeddings) k = a.pos_embeddings->forward(k, input_pos);
    k = transpose(k, 1, 2);  // [b, n_kv, s_y, h_d]
    v = transpose(v, 1, 2);
    if (a.k_norm) k = a.k_norm->forward(k);
    if (a.kv_cache && cache_enabled_) std::tie(k, v) = a.kv_cache->update(k, v);
  }
  if (a.num_heads != a.num_kv_heads) {  // [b, n_kv, s, h_d] -> [b, n_h, s, h_d]
    const SymIntList expanded{b, SymInt(a.num_kv_heads), SymInt(q_per_kv), -1, SymInt(a.head_dim)};
    k = flatten(expand(unsqueeze(k, 2), expanded), 1, 2);
    v = flatten(expand(unsqueeze(v, 2), expanded), 1, 2);
  }
  std::optional<Tensor> attn_mask;
  if (mask.defined()) attn_mask = unsqueeze(mask, 1);  // [b, 1, s_x, s_kv]
  const bool is_causal = !a.kv_cache && !mask.defined() && a.is_causal;
  Tensor out = scaled_dot_product_attention(q, k, v, attn_mask, is_causal);  // [b, n_h, s_x, h_d]
  out = reshape(transpose(out, 1, 2),
                {b, s_x, SymInt(a.num_heads * a.head_dim)});  // [b, s_x, n_h * h_d]
  return a.output_proj->forward(out);
}

}  // namespace ingot::tune
