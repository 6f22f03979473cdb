#include "ingot/models/decoder_lm.h"

#include "ingot/ops/functional.h"

namespace ingot::models {

DecoderConfig DecoderConfig::from_llama_like(const ConfigReader& c) {
  DecoderConfig d;
  d.vocab_size = c.get_int("vocab_size");
  d.hidden_size = c.get_int("hidden_size");
  d.intermediate_size = c.get_int("intermediate_size");
  d.num_layers = c.get_int("num_hidden_layers");
  d.num_heads = c.get_int("num_attention_heads");
  d.num_kv_heads = c.get_int("num_key_value_heads", d.num_heads);
  INGOT_CHECK(d.num_heads > 0, IoError, "[config] '{}': num_attention_heads must be > 0, got {}",
              c.origin(), d.num_heads);
  d.head_dim = c.get_int("head_dim", d.hidden_size / d.num_heads);
  d.max_position_embeddings = c.get_int("max_position_embeddings", 2048);
  d.rms_norm_eps = c.get_double("rms_norm_eps", 1e-6);
  d.hidden_act = c.get_string("hidden_act", "silu");
  d.rope = c.rope();
  d.tie_word_embeddings = c.get_bool("tie_word_embeddings", false);
  INGOT_CHECK(d.num_heads > 0 && d.num_kv_heads > 0 && d.num_heads % d.num_kv_heads == 0, IoError,
              "[config] '{}': num_attention_heads {} must be a positive multiple of "
              "num_key_value_heads {}", c.origin(), d.num_heads, d.num_kv_heads);
  return d;
}

DecoderLayer::DecoderLayer(const DecoderConfig& c, size_t index, DType dtype)
    : nn::Module("DecoderLayer") {
  nn::AttentionConfig ac{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim,
                         c.attention_bias, c.output_bias, c.qk_norm, c.rms_norm_eps, dtype};
  self_attn_ = register_module("self_attn", std::make_shared<nn::SelfAttention>(ac, index));
  mlp_ = register_module("mlp", std::make_shared<nn::GatedMLP>(c.hidden_size, c.intermediate_size,
                                                               c.hidden_act, c.mlp_bias, dtype));
  input_layernorm_ = register_module("input_layernorm", std::make_shared<nn::RMSNorm>(c.hidden_size, c.rms_norm_eps, dtype));
  post_attention_layernorm_ = register_module("post_attention_layernorm", std::make_shared<nn::RMSNorm>(c.hidden_size, c.rms_norm_eps, dtype));
}

Tensor DecoderLayer::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                             const Tensor& mask, nn::Cache* cache) const {
  Tensor h = add(x, self_attn_->forward(input_layernorm_->forward(x), cos, sin, mask, cache));
  return add(h, mlp_->forward(post_attention_layernorm_->forward(h)));
}

DecoderLM::DecoderLM(const DecoderConfig& c, DType dtype) : PretrainedModel("DecoderLM"), config_(c) {
  // The decoder stack lives under "model" like transformers' LlamaModel.
  auto body = register_module("model", std::make_shared<nn::Container>("DecoderModel"));
  embed_tokens_ = body->add("embed_tokens", std::make_shared<nn::Embedding>(c.vocab_size, c.hidden_size, dtype));
  layers_ = body->add("layers", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.num_layers; ++i) layers_->append(std::make_shared<DecoderLayer>(c, size_t(i), dtype));
  norm_ = body->add("norm", std::make_shared<nn::RMSNorm>(c.hidden_size, c.rms_norm_eps, dtype));
  rotary_ = body->add("rotary_emb", std::make_shared<nn::RotaryEmbedding>(c.head_dim, c.rope, c.max_position_embeddings));
  if (!c.tie_word_embeddings) {
    lm_head_ = register_module("lm_head", std::make_shared<nn::Linear>(c.hidden_size, c.vocab_size, false, dtype));
  }
}

std::optional<nn::CacheSpec> DecoderLM::cache_spec() const {
  // k and v carry the activations' dtype: the embedding's (the compute dtype).
  return nn::CacheSpec{config_.num_layers, config_.num_kv_heads, config_.head_dim,
                       embed_tokens_->weight().dtype()};
}

// Trace-friendly: batch and seq are only used as SymInts, positions and masks are ops.
ModelOutputs DecoderLM::forward(const ModelInputs& in) {
  check_input_ids(in, architecture());
  if (in.cache) in.cache->check_compatible(*cache_spec());
  const SymInt batch = in.input_ids.sym_size(0), seq = in.input_ids.sym_size(1);
  // Absolute positions of the new tokens [seq], and the key slots attention sees.
  Tensor positions = in.cache ? in.cache->new_positions(seq) : arange_symint(seq);
  const SymInt key_length = in.cache ? in.cache->key_length(seq) : seq;
  Tensor position_ids =
      in.position_ids.defined() ? in.position_ids : default_position_ids(positions, batch);
  Tensor x = embed_tokens_->forward(in.input_ids);  // [b, s, hidden]
  auto [cos, sin] = rotary_->forward(position_ids, x.dtype());
  Tensor mask = nn::causal_mask(positions, key_length, in.attention_mask, config_.sliding_window);
  ModelOutputs out;
  if (in.output_hidden_states) out.hidden_states.push_back(x);
  for (size_t i = 0; i < layers_->size(); ++i) {
    x = layers_->at<DecoderLayer>(i).forward(x, cos, sin, mask, in.cache);
    if (in.output_hidden_states && i + 1 < layers_->size()) out.hidden_states.push_back(x);
  }
  x = norm_->forward(x);
  // transformers reports the final-normed state as the last hidden state.
  if (in.output_hidden_states) out.hidden_states.push_back(x);
  out.last_hidden_state = x;
  out.logits = linear(x, lm_head_ ? lm_head_->weight() : embed_tokens_->weight());
  return out;
}

}  // namespace ingot::models
