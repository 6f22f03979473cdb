// SDPA: the attention step of the export-friendly MultiHeadAttention as a submodule of its
// own (torchtune.modules._export.attention.SDPA), so that users of an exported program can
// swap in another attention implementation (subclass and override forward, then
// ExportMultiHeadAttention::set_sdpa).
//
// forward takes the projections' layout, q [b, s, n_h, h_d] and k, v [b, s_kv, n_kv, h_d],
// transposes them to [b, n, s, h_d], expands the kv heads to the query heads (GQA / MQA:
// unsqueeze, expand, flatten), runs scaled_dot_product_attention and returns
// [bsz, seq_len, n_h * h_d]. The causal mask is used only when there is no KV cache, no
// explicit mask and is_causal; mask is bool [b, s, s_kv] (true = attend).
#pragma once

#include "ingot/nn/module.h"

namespace ingot::tune {

class SDPA : public nn::Module {
 public:
  SDPA(int64_t num_kv_heads, int64_t num_heads, int64_t head_dim, int64_t q_per_kv,
       double attn_dropout, bool is_causal, bool has_kv_cache);

  virtual Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SymInt& bsz,
                         const SymInt& seq_len, const Tensor& mask = Tensor()) const;

  // Set by the attention module when it sets up its cache (torchtune: _sdpa.kv_cache).
  void set_has_kv_cache(bool on) { has_kv_cache_ = on; }
  bool has_kv_cache() const { return has_kv_cache_; }

 protected:
  // Used by subclasses as well (type name of the replacement).
  SDPA(std::string type_name, int64_t num_kv_heads, int64_t num_heads, int64_t head_dim,
       int64_t q_per_kv, double attn_dropout, bool is_causal, bool has_kv_cache);
  // Whether this call applies the causal mask (the rule above).
  bool use_causal(const Tensor& mask) const {
    return !has_kv_cache_ && !mask.defined() && is_causal_;
  }

  int64_t num_kv_heads_, num_heads_, head_dim_, q_per_kv_;
  double attn_dropout_;
  bool is_causal_;
  bool has_kv_cache_;
};

}  // namespace ingot::tune
