// The decoder-only transformer shared by the Llama-like families (Llama, Mistral, Qwen2,
// Qwen3, Gemma 1-3, Phi-3, OLMo 2, Granite, StableLM, SmolLM3): blocks of rotary
// self-attention and a gated MLP, a final norm and an LM head (tied to the embedding or
// not). Module names follow transformers:
//   model.embed_tokens, model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj (or
//   qkv_proj), self_attn.{q,k}_norm (or {q,k}_layernorm), post_attention_layernorm,
//   pre_feedforward_layernorm, post_feedforward_layernorm, mlp.{gate,up,down}_proj (or
//   gate_up_proj)}, model.norm, lm_head.
// Each architecture file maps its config.json onto DecoderConfig; the fields below are
// the features the families differ by, each defaulting to Llama's behaviour.
#pragma once

#include "ingot/models/model.h"
#include "ingot/nn/moe.h"
#include "ingot/nn/rotary.h"

namespace ingot::models {

enum class NormKind {
  kRms,        // RMSNorm scaled by weight (Llama)
  kRmsOffset,  // RMSNorm scaled by 1 + weight (Gemma)
  kLayerNorm,  // LayerNorm with bias (StableLM)
};

// How a block wires its norms around attention and the MLP (residual r, scale g):
enum class BlockKind {
  kPreNorm,   // h = x + g attn(in(x)); out = h + g mlp(post_attn(h))          Llama
  kSandwich,  // h = x + post_attn(attn(in(x))); out = h + post_ff(mlp(pre_ff(h)))  Gemma 2/3
  kPostNorm,  // h = x + post_attn(attn(x)); out = h + post_ff(mlp(h))           OLMo 2
  kParallel,  // n = in(x); out = x + attn(n) + mlp(n)                           StableLM option
};

struct DecoderConfig {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;  // the eps of every norm (LayerNorm's too)
  std::string hidden_act = "silu";
  RopeConfig rope;
  bool attention_bias = false;  // q/k/v (Qwen2: true)
  bool output_bias = false;     // o_proj (Llama's attention_bias covers it too)
  bool mlp_bias = false;
  nn::QkNorm qk_norm = nn::QkNorm::kNone;  // Qwen3 / Gemma 3, OLMo 2, StableLM
  bool tie_word_embeddings = false;
  NormKind norm = NormKind::kRms;
  BlockKind block = BlockKind::kPreNorm;
  bool fused_qkv = false;      // Phi-3 qkv_proj
  bool fused_gate_up = false;  // Phi-3 gate_up_proj
  // Sliding attention window, applied to the layers `sliding_layers` marks (all layers
  // when it is empty: Mistral). Each query sees at most that many most recent keys.
  std::optional<int64_t> sliding_window;
  std::vector<bool> sliding_layers;
  std::vector<bool> rope_layers;          // false: a NoPE layer (SmolLM3); empty: all rotary
  std::optional<RopeConfig> local_rope;   // the sliding layers' rotary (Gemma 3)
  std::optional<double> attention_scale;  // default 1 / sqrt(head_dim)
  std::optional<double> attn_softcap;     // Gemma 2 attention-logit soft-capping
  std::optional<double> final_softcap;    // Gemma 2/3 final-logit soft-capping
  double embedding_scale = 1.0;           // Gemma sqrt(hidden), Granite embedding_multiplier
  double residual_scale = 1.0;            // Granite residual_multiplier (pre-norm blocks)
  double logits_divisor = 1.0;            // Granite logits_scaling
  // Mixture of experts (Mixtral, Qwen3-MoE): the layers `moe_layers` marks (all when
  // empty) use a SparseMoE instead of the dense MLP, registered as `mlp_name`.
  std::optional<nn::MoeConfig> moe;
  std::vector<bool> moe_layers;
  std::string mlp_name = "mlp";  // Mixtral: block_sparse_moe
  // Multimodal rotary (Qwen2-VL's mrope_section, summing to head_dim / 2): with position_ids
  // [3, batch, seq], frequency i takes its angle from the row (t, h, w) of its section.
  std::vector<int64_t> mrope_section;

  // Fields common to all Llama-family configs; architecture files adjust the rest.
  static DecoderConfig from_llama_like(const ConfigReader& c);
  // `layer_types` ("full_attention" / "sliding_attention") -> sliding_layers; when the
  // config has none, `fallback` (one flag per layer) is used. Unknown types are rejected.
  void read_layer_types(const ConfigReader& c, std::vector<bool> fallback);
  // Qwen2 / Qwen3 / SmolLM3: a window only with `use_sliding_window`, on the layers
  // layer_types marks (without it: those at or past `max_window_layers`).
  void read_optional_sliding_windows(const ConfigReader& c);
};

// RMSNorm / RMSNorm(1 + w) / LayerNorm by kind.
std::shared_ptr<nn::Normalization> make_norm(NormKind kind, int64_t dim, double eps, DType dtype);

class DecoderLayer : public nn::Module {
 public:
  DecoderLayer(const DecoderConfig& c, size_t index, DType dtype);
  // x [b, s, hidden]; cos / sin undefined for a NoPE layer.
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 nn::Cache* cache) const;

 private:
  BlockKind block_;
  double residual_scale_;
  std::shared_ptr<nn::Normalization> input_layernorm_, post_attention_layernorm_,
      pre_feedforward_layernorm_, post_feedforward_layernorm_;
  std::shared_ptr<nn::SelfAttention> self_attn_;
  std::shared_ptr<nn::FeedForward> mlp_;
};

class DecoderLM : public PretrainedModel {
 public:
  DecoderLM(const DecoderConfig& c, DType dtype);
  ModelOutputs forward(const ModelInputs& inputs) override;
  std::vector<std::string> input_names() const override {
    return {"input_ids", "attention_mask", "position_ids"};
  }
  std::optional<nn::CacheSpec> cache_spec() const override;
  const DecoderConfig& config() const { return config_; }
  // The pieces a vision-language model runs apart (models/vision/vision_language.h):
  // input_ids [b, s] -> embeddings [b, s, hidden] (before any embedding_scale, which
  // forward applies to inputs_embeds too, as transformers does) ...
  Tensor embed(const Tensor& input_ids) const { return embed_tokens_->forward(input_ids); }
  // ... inputs_embeds [b, s, hidden] (+ position_ids, cache) -> the final-normed hidden
  // state [b, s, hidden] ...
  Tensor hidden_from_embeds(const Tensor& inputs_embeds, const Tensor& position_ids,
                            nn::Cache* cache);
  // ... and the final-normed hidden state [b, s, hidden] -> logits [b, s, vocab].
  Tensor logits(const Tensor& hidden) const;
  // The state-dict name of the embedding table (under this module).
  static constexpr const char* kEmbedTokensWeight = "model.embed_tokens.weight";

 private:
  DecoderConfig config_;
  std::shared_ptr<nn::Embedding> embed_tokens_;
  std::shared_ptr<nn::ModuleList> layers_;
  std::shared_ptr<nn::Normalization> norm_;
  std::shared_ptr<nn::RotaryEmbedding> rotary_;
  std::shared_ptr<nn::RotaryEmbedding> local_rotary_;  // Gemma 3 sliding layers
  std::shared_ptr<nn::Linear> lm_head_;                // null when tied to embed_tokens
};

}  // namespace ingot::models
