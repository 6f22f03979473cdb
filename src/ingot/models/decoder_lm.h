// The decoder-only transformer shared by the Llama family (Llama, Mistral, Qwen2,
// Qwen3): pre-norm blocks of rotary self-attention and a gated MLP, a final RMSNorm and
// an LM head (tied to the embedding or not). Module names follow transformers:
//   model.embed_tokens, model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj,
//   self_attn.{q,k}_norm, post_attention_layernorm, mlp.{gate,up,down}_proj},
//   model.norm, lm_head.
// Each architecture file maps its config.json onto DecoderConfig.
#pragma once

#include "ingot/models/model.h"
#include "ingot/nn/rotary.h"

namespace ingot::models {

struct DecoderConfig {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  std::string hidden_act = "silu";
  RopeConfig rope;
  bool attention_bias = false;  // q/k/v (Qwen2: true)
  bool output_bias = false;     // o_proj (Llama's attention_bias covers it too)
  bool mlp_bias = false;
  bool qk_norm = false;         // Qwen3
  bool tie_word_embeddings = false;
  std::optional<int64_t> sliding_window;  // Mistral (and Qwen2 with use_sliding_window)

  // Fields common to all Llama-family configs; architecture files adjust the rest.
  static DecoderConfig from_llama_like(const ConfigReader& c);
};

class DecoderLayer : public nn::Module {
 public:
  DecoderLayer(const DecoderConfig& c, size_t index, DType dtype);
  // x [b, s, hidden]
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 nn::Cache* cache) const;

 private:
  std::shared_ptr<nn::RMSNorm> input_layernorm_, post_attention_layernorm_;
  std::shared_ptr<nn::SelfAttention> self_attn_;
  std::shared_ptr<nn::GatedMLP> mlp_;
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

 private:
  DecoderConfig config_;
  std::shared_ptr<nn::Embedding> embed_tokens_;
  std::shared_ptr<nn::ModuleList> layers_;
  std::shared_ptr<nn::RMSNorm> norm_;
  std::shared_ptr<nn::RotaryEmbedding> rotary_;
  std::shared_ptr<nn::Linear> lm_head_;  // null when tied to embed_tokens
};

}  // namespace ingot::models
