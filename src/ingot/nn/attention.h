// Multi-head self-attention of decoder LLMs (Llama, Mistral, Qwen2, Qwen3) with Hugging
// Face parameter names, plus the masks it uses. Caches are in cache.h / static_cache.h.
//
// MHA / GQA / MQA by num_kv_heads; optional qkv bias (Qwen2) and per-head q/k RMSNorm
// (Qwen3). Attention itself is the fused scaled_dot_product_attention op.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "ingot/nn/cache.h"
#include "ingot/nn/layers.h"

namespace ingot::nn {

// Boolean attention mask [batch or 1, 1, q, key_length] for queries at absolute
// positions query_positions ([q] int64, from Cache::new_positions or arange(q)) over key
// slots [0, key_length): True where slot j may be attended — causal (j <= position),
// inside the sliding window if any (position - j < window), and not padding. Causality
// also hides a static cache's slots that hold no token yet.
// attention_mask, when defined, is either [batch, key_length] 0/1 over the key slots
// (1 = a real token; with a StaticCache its length is max_cache_len), or a 4-D bool (or
// 0/1) mask [batch or 1, 1, q, key_length] used as is (no causal or window terms added,
// as transformers does with 4-D masks). Built with ops over SymInts, so it traces with
// symbolic batch, q and key_length.
Tensor causal_mask(const Tensor& query_positions, const SymInt& key_length,
                   const Tensor& attention_mask, std::optional<int64_t> sliding_window);
// Bidirectional padding mask [batch, 1, 1, seq] for encoders (True = attend).
Tensor padding_mask(const Tensor& attention_mask);

struct AttentionConfig {
  int64_t hidden_size;
  int64_t num_heads;
  int64_t num_kv_heads;
  int64_t head_dim;
  bool qkv_bias = false;
  bool output_bias = false;
  bool qk_norm = false;  // Qwen3: RMSNorm over head_dim on q and k before rotary
  double rms_norm_eps = 1e-6;
  DType dtype = DType::F32;
};

class SelfAttention : public Module {
 public:
  SelfAttention(const AttentionConfig& config, size_t layer_index);
  // x [batch, seq, hidden]; cos/sin from RotaryEmbedding; mask from causal_mask (over the
  // cache's key_length when a cache is given: it stores k, v under this layer's index).
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 Cache* cache) const;

 private:
  AttentionConfig config_;
  size_t layer_index_;
  std::shared_ptr<Linear> q_proj_, k_proj_, v_proj_, o_proj_;
  std::shared_ptr<RMSNorm> q_norm_, k_norm_;
};

// Activation by Hugging Face name: silu/swish, gelu, gelu_new, gelu_pytorch_tanh,
// gelu_fast (tanh approximations), relu. NotSupportedError names unknown ones.
Tensor activation(const std::string& name, const Tensor& x);
void check_activation(const std::string& name);

// down(act(gate(x)) * up(x)) — Llama-family MLP.
class GatedMLP : public Module {
 public:
  GatedMLP(int64_t hidden, int64_t intermediate, std::string act, bool bias, DType dtype);
  Tensor forward(const Tensor& x) const;

 private:
  std::string act_;
  std::shared_ptr<Linear> gate_proj_, up_proj_, down_proj_;
};

}  // namespace ingot::nn
