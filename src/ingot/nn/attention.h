// Multi-head self-attention of decoder LLMs (Llama, Mistral, Qwen, Gemma, Phi-3, OLMo 2,
// Granite, StableLM, SmolLM3) with Hugging Face parameter names, plus the masks it uses.
// Caches are in cache.h / static_cache.h.
//
// MHA / GQA / MQA by num_kv_heads; optional qkv bias (Qwen2), fused qkv_proj (Phi-3),
// q/k norms (see QkNorm), a custom score scale (Gemma 2's query_pre_attn_scalar,
// Granite's attention_multiplier) and tanh soft-capping of the scores (Gemma 2).
// Attention is the fused scaled_dot_product_attention op, or explicit matmul / softmax
// ops when soft-capping (which SDPA cannot express).
#pragma once

#include <array>
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
// The sliding window alone: [1, 1, q, key_length] bool, True where position - j < window
// for the query at `position` (query_positions [q] int64) and key slot j.
Tensor sliding_window_mask(const Tensor& query_positions, const SymInt& key_length, int64_t window);
// Bidirectional padding mask [batch, 1, 1, seq] for encoders (True = attend).
Tensor padding_mask(const Tensor& attention_mask);

// Where q and k are normalised (always before rotary).
enum class QkNorm {
  kNone,
  kPerHead,           // Qwen3, Gemma 3: q_norm / k_norm, an RMSNorm over head_dim
  kFull,              // OLMo 2: q_norm / k_norm, an RMSNorm over all heads' channels
  kPerHeadLayerNorm,  // StableLM: q_layernorm.norms.H, a bias-free LayerNorm per head
};

struct AttentionConfig {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  bool qkv_bias = false;
  bool output_bias = false;
  QkNorm qk_norm = QkNorm::kNone;
  bool norm_weight_offset = false;  // Gemma: RMSNorm scales by 1 + weight
  double rms_norm_eps = 1e-6;
  bool fused_qkv = false;         // Phi-3: one qkv_proj whose output is [q | k | v]
  std::optional<double> scale;    // score scale; default 1 / sqrt(head_dim)
  std::optional<double> softcap;  // Gemma 2: scores -> softcap * tanh(scores / softcap)
  DType dtype = DType::F32;
};

class SelfAttention : public Module {
 public:
  SelfAttention(const AttentionConfig& config, size_t layer_index);
  // x [batch, seq, hidden]; cos/sin from RotaryEmbedding (undefined: no rotary, as
  // SmolLM3's NoPE layers); mask from causal_mask (over the cache's key_length when a
  // cache is given: it stores k, v under this layer's index).
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 Cache* cache) const;

 private:
  AttentionConfig config_;
  size_t layer_index_;
  std::shared_ptr<Linear> q_proj_, k_proj_, v_proj_, qkv_proj_, o_proj_;
  std::shared_ptr<Normalization> q_norm_, k_norm_;
};

// StableLM's per-head q/k LayerNorm: norms.H (bias-free LayerNorm over head_dim) for
// head H. x [batch, seq, heads, head_dim].
class PerHeadLayerNorm : public Normalization {
 public:
  PerHeadLayerNorm(int64_t heads, int64_t head_dim, double eps, DType dtype);
  Tensor forward(const Tensor& x) const override;

 private:
  int64_t head_dim_;
  double eps_;
  std::shared_ptr<ModuleList> norms_;
};

// Attention written out as ops: softmax(cap * tanh(q k^T * scale / cap) + mask) v, with
// the scores' softmax in float32 (transformers' eager attention). q [b, h, q, d],
// k / v [b, kv_heads, kv, d] (repeated to h heads), mask bool [.., q, kv].
Tensor softcapped_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                            double scale, double softcap);

// Activation by Hugging Face name: silu/swish, gelu, gelu_new, gelu_pytorch_tanh,
// gelu_fast (tanh approximations), relu. NotSupportedError names unknown ones.
Tensor activation(const std::string& name, const Tensor& x);
void check_activation(const std::string& name);

// The feed-forward half of a decoder block: [..., hidden] -> [..., hidden].
class FeedForward : public Module {
 public:
  using Module::Module;
  virtual Tensor forward(const Tensor& x) const = 0;
};

// down(act(gate(x)) * up(x)) — Llama-family MLP; `fused` reads one gate_up_proj whose
// output is [gate | up] (Phi-3). `names` overrides the gate / up / down module names
// (Mixtral's experts call them w1 / w3 / w2).
class GatedMLP : public FeedForward {
 public:
  GatedMLP(int64_t hidden, int64_t intermediate, std::string act, bool bias, DType dtype,
           bool fused = false,
           const std::array<const char*, 3>& names = {"gate_proj", "up_proj", "down_proj"});
  Tensor forward(const Tensor& x) const override;
  const Linear& gate_proj() const { return *gate_proj_; }
  const Linear& up_proj() const { return *up_proj_; }
  const Linear& down_proj() const { return *down_proj_; }

 private:
  std::string act_;
  int64_t intermediate_;
  std::shared_ptr<Linear> gate_proj_, up_proj_, gate_up_proj_, down_proj_;
};

}  // namespace ingot::nn
