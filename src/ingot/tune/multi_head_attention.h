// torchtune's reference MultiHeadAttention (torchtune.modules.MultiHeadAttention):
// multi-head, grouped-query (num_kv_heads < num_heads) or multi-query (num_kv_heads = 1)
// attention over given projection modules, with optional rotary embeddings, QK-norm and
// a KV cache for incremental decoding. Self-attention passes y = x; cross-attention a
// different y; decoding steps that only read the cache pass no y.
//
// The constructor arguments are one struct, shared with the export-friendly variant
// (export_attention.h) so both take exactly the same arguments.
#pragma once

#include <memory>

#include "ingot/nn/layers.h"
#include "ingot/tune/kv_cache.h"
#include "ingot/tune/rope.h"

namespace ingot::tune {

struct MultiHeadAttentionArgs {
  int64_t embed_dim = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  std::shared_ptr<nn::Linear> q_proj;                   // embed_dim -> num_heads * head_dim
  std::shared_ptr<nn::Linear> k_proj;                   // embed_dim -> num_kv_heads * head_dim
  std::shared_ptr<nn::Linear> v_proj;                   // embed_dim -> num_kv_heads * head_dim
  std::shared_ptr<nn::Linear> output_proj;              // num_heads * head_dim -> embed_dim
  std::shared_ptr<PositionalEmbedding> pos_embeddings;  // optional
  std::shared_ptr<nn::RMSNorm> q_norm;  // optional, over head_dim; set with k_norm or not at all
  std::shared_ptr<nn::RMSNorm> k_norm;
  std::shared_ptr<KVCache> kv_cache;  // optional (usually created by setup_cache)
  int64_t max_seq_len = 4096;         // for the rotary cache; kept for the caller
  bool is_causal = true;
  double attn_dropout = 0.0;  // in [0, 1]; only 0 is supported when running
};

// The torchtune constructor checks, as ValueErrors prefixed "[<api>]":
//   num_heads (N) must be divisible by num_kv_heads (K)
//   embed_dim (E) must be divisible by num_heads (N)
//   attn_dropout (P) must be between 0.0 and 1.0
//   q and k norm must be set together
// plus: positive sizes and the four projections present.
void validate_attention_args(const MultiHeadAttentionArgs& args, const std::string& api);

class MultiHeadAttention : public nn::Module {
 public:
  explicit MultiHeadAttention(MultiHeadAttentionArgs args);

  // x [b, s_x, embed_dim]; y [b, s_y, embed_dim] or undefined (read keys / values from
  // the cache); mask bool [b, s_x, s_kv] (true = attend; with a cache s_kv is the cache's
  // max_seq_len) or undefined; input_pos int64 [b, s_x] positions for the rotary
  // embedding, or undefined (0..s-1). Returns [b, s_x, embed_dim].
  // The causal mask applies only without a cache, without a mask and with is_causal.
  Tensor forward(const Tensor& x, const Tensor& y = Tensor(), const Tensor& mask = Tensor(),
                 const Tensor& input_pos = Tensor()) const;

  // Creates a KVCache [batch_size, num_kv_heads, max_seq_len, head_dim] and enables cache
  // updates. With a cache already present it warns on stderr, keeps it and returns false.
  bool setup_cache(int64_t batch_size, DType dtype, int64_t max_seq_len);
  // ValueError when no cache is set up; otherwise KVCache::reset().
  void reset_cache();
  // Whether forward writes new keys / values into the cache (set by setup_cache).
  bool cache_enabled() const { return cache_enabled_; }
  void set_cache_enabled(bool on) { cache_enabled_ = on; }

  // The constructor arguments (kv_cache reflects setup_cache).
  const MultiHeadAttentionArgs& args() const { return args_; }
  const std::shared_ptr<KVCache>& kv_cache() const { return args_.kv_cache; }

 private:
  MultiHeadAttentionArgs args_;
  bool cache_enabled_ = false;
};

}  // namespace ingot::tune
