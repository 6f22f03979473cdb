// Multi-head self-attention of decoder LLMs (Llama, Mistral, Qwen2, Qwen3) with Hugging
// Face parameter names, plus the masks and the eager KV cache it uses.
//
// MHA / GQA / MQA by num_kv_heads; optional qkv bias (Qwen2) and per-head q/k RMSNorm
// (Qwen3). Attention itself is the fused scaled_dot_product_attention op.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "ingot/nn/layers.h"

namespace ingot::nn {

// Growing per-layer K/V for incremental eager decoding: [batch, kv_heads, seq, head_dim].
class KVCache {
 public:
  // Appends this step's k, v for `layer` and returns the full K, V so far.
  std::pair<Tensor, Tensor> update(size_t layer, const Tensor& k, const Tensor& v);
  // Tokens already cached (0 before the first update).
  int64_t seq_length() const;
  void clear() { layers_.clear(); }

 private:
  std::vector<std::pair<Tensor, Tensor>> layers_;
};

// Boolean attention mask [batch or 1, 1, q_len, past + q_len]: True where query i
// (absolute position past + i) may attend key j — causal (j <= past + i), inside the
// sliding window if any (past + i - j < window), and not padding (attention_mask[b, j]
// != 0 when given, shape [batch, past + q_len]). Built with ops so it traces.
Tensor causal_mask(int64_t q_len, int64_t past, const Tensor& attention_mask,
                   std::optional<int64_t> sliding_window);
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
  // x [batch, seq, hidden]; cos/sin from RotaryEmbedding; mask from causal_mask.
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 KVCache* cache) const;

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
