#include "ingot/models/decoder/decoder_lm.h"

#include "ingot/core/half.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"

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
              "num_key_value_heads {}",
              c.origin(), d.num_heads, d.num_kv_heads);
  return d;
}

void DecoderConfig::read_layer_types(const ConfigReader& c, std::vector<bool> fallback) {
  std::vector<std::string> types = c.get_string_list("layer_types");
  if (types.empty()) {
    sliding_layers = std::move(fallback);
    return;
  }
  INGOT_CHECK(int64_t(types.size()) == num_layers, IoError,
              "[config] '{}': layer_types has {} entries for {} layers", c.origin(), types.size(),
              num_layers);
  sliding_layers.clear();
  for (const std::string& t : types) {
    INGOT_CHECK(t == "full_attention" || t == "sliding_attention", NotSupportedError,
                "[config] '{}': layer type '{}' is not supported (supported: full_attention, "
                "sliding_attention)",
                c.origin(), t);
    sliding_layers.push_back(t == "sliding_attention");
  }
}

void DecoderConfig::read_optional_sliding_windows(const ConfigReader& c) {
  const bool use = c.get_bool("use_sliding_window", false);
  sliding_window = use ? c.get_optional_int("sliding_window") : std::nullopt;
  const int64_t first = c.get_int("max_window_layers", num_layers);
  std::vector<bool> fallback;
  for (int64_t i = 0; i < num_layers; ++i) fallback.push_back(sliding_window && i >= first);
  read_layer_types(c, fallback);
  if (!sliding_window) sliding_layers.assign(size_t(num_layers), false);  // as transformers
}

std::shared_ptr<nn::Normalization> make_norm(NormKind kind, int64_t dim, double eps, DType dtype) {
  if (kind == NormKind::kLayerNorm) return std::make_shared<nn::LayerNorm>(dim, eps, true, dtype);
  return std::make_shared<nn::RMSNorm>(dim, eps, dtype, kind == NormKind::kRmsOffset);
}

DecoderLayer::DecoderLayer(const DecoderConfig& c, size_t index, DType dtype)
    : nn::Module("DecoderLayer"), block_(c.block), residual_scale_(c.residual_scale) {
  nn::AttentionConfig ac;
  ac.hidden_size = c.hidden_size;
  ac.num_heads = c.num_heads;
  ac.num_kv_heads = c.num_kv_heads;
  ac.head_dim = c.head_dim;
  ac.qkv_bias = c.attention_bias;
  ac.output_bias = c.output_bias;
  ac.qk_norm = c.qk_norm;
  ac.norm_weight_offset = c.norm == NormKind::kRmsOffset;
  ac.rms_norm_eps = c.rms_norm_eps;
  ac.fused_qkv = c.fused_qkv;
  ac.scale = c.attention_scale;
  ac.softcap = c.attn_softcap;
  ac.dtype = dtype;
  self_attn_ = register_module("self_attn", std::make_shared<nn::SelfAttention>(ac, index));
  const bool sparse = c.moe && (c.moe_layers.empty() || c.moe_layers.at(index));
  if (sparse) {
    mlp_ =
        register_module(c.mlp_name, std::make_shared<nn::SparseMoE>(c.hidden_size, *c.moe, dtype));
  } else {
    mlp_ = register_module(
        "mlp", std::make_shared<nn::GatedMLP>(c.hidden_size, c.intermediate_size, c.hidden_act,
                                              c.mlp_bias, dtype, c.fused_gate_up));
  }
  auto norm = [&](const char* name) {
    return register_module(name, make_norm(c.norm, c.hidden_size, c.rms_norm_eps, dtype));
  };
  if (block_ != BlockKind::kPostNorm) input_layernorm_ = norm("input_layernorm");
  if (block_ != BlockKind::kParallel) post_attention_layernorm_ = norm("post_attention_layernorm");
  if (block_ == BlockKind::kSandwich)
    pre_feedforward_layernorm_ = norm("pre_feedforward_layernorm");
  if (block_ == BlockKind::kSandwich || block_ == BlockKind::kPostNorm) {
    post_feedforward_layernorm_ = norm("post_feedforward_layernorm");
  }
}

Tensor DecoderLayer::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                             const Tensor& mask, nn::Cache* cache) const {
  auto attn = [&](const Tensor& t) { return self_attn_->forward(t, cos, sin, mask, cache); };
  auto scaled = [&](const Tensor& t) {
    return residual_scale_ == 1.0 ? t : mul(t, residual_scale_);
  };
  switch (block_) {
    case BlockKind::kPreNorm: {
      Tensor h = add(x, scaled(attn(input_layernorm_->forward(x))));
      return add(h, scaled(mlp_->forward(post_attention_layernorm_->forward(h))));
    }
    case BlockKind::kSandwich: {
      Tensor h = add(x, post_attention_layernorm_->forward(attn(input_layernorm_->forward(x))));
      Tensor m = mlp_->forward(pre_feedforward_layernorm_->forward(h));
      return add(h, post_feedforward_layernorm_->forward(m));
    }
    case BlockKind::kPostNorm: {
      Tensor h = add(x, post_attention_layernorm_->forward(attn(x)));
      return add(h, post_feedforward_layernorm_->forward(mlp_->forward(h)));
    }
    case BlockKind::kParallel: {
      Tensor n = input_layernorm_->forward(x);
      return add(add(x, attn(n)), mlp_->forward(n));
    }
  }
  return x;
}

DecoderLM::DecoderLM(const DecoderConfig& c, DType dtype)
    : PretrainedModel("DecoderLM"), config_(c) {
  if (config_.sliding_layers.empty()) {
    config_.sliding_layers.assign(size_t(c.num_layers), c.sliding_window.has_value());
  }
  if (config_.rope_layers.empty()) config_.rope_layers.assign(size_t(c.num_layers), true);
  INGOT_CHECK(int64_t(config_.sliding_layers.size()) == c.num_layers &&
                  int64_t(config_.rope_layers.size()) == c.num_layers,
              ValueError, "[DecoderLM] per-layer settings must have one entry per layer ({})",
              c.num_layers);
  for (bool sliding : config_.sliding_layers) {
    INGOT_CHECK(!sliding || c.sliding_window, ValueError,
                "[DecoderLM] a sliding-attention layer needs sliding_window");
  }
  // The decoder stack lives under "model" like transformers' LlamaModel.
  auto body = register_module("model", std::make_shared<nn::Container>("DecoderModel"));
  embed_tokens_ = body->add("embed_tokens",
                            std::make_shared<nn::Embedding>(c.vocab_size, c.hidden_size, dtype));
  layers_ = body->add("layers", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.num_layers; ++i)
    layers_->append(std::make_shared<DecoderLayer>(c, size_t(i), dtype));
  norm_ = body->add("norm", make_norm(c.norm, c.hidden_size, c.rms_norm_eps, dtype));
  rotary_ = body->add("rotary_emb", std::make_shared<nn::RotaryEmbedding>(
                                        c.head_dim, c.rope, c.max_position_embeddings));
  if (c.local_rope) {
    local_rotary_ =
        body->add("rotary_emb_local", std::make_shared<nn::RotaryEmbedding>(
                                          c.head_dim, *c.local_rope, c.max_position_embeddings));
  }
  if (!c.tie_word_embeddings) {
    lm_head_ = register_module(
        "lm_head", std::make_shared<nn::Linear>(c.hidden_size, c.vocab_size, false, dtype));
  }
}

std::optional<nn::CacheSpec> DecoderLM::cache_spec() const {
  // k and v carry the activations' dtype: the embedding's (the compute dtype).
  return nn::CacheSpec{config_.num_layers, config_.num_kv_heads, config_.head_dim,
                       embed_tokens_->dtype()};
}

namespace {

// cap * tanh(x / cap): Gemma's soft-capping.
Tensor softcap(const Tensor& x, double cap) {
  return mul(tanh(div(x, cap)), cap);
}

// `value` rounded to `dtype`, as transformers' scale tensors are (Gemma's embed_scale).
double rounded(double value, DType dtype) {
  if (dtype == DType::BF16) return float(BFloat16(float(value)));
  return float(value);
}

// M-RoPE (transformers' Qwen2VLRotaryEmbedding.recomposition_frequencies): cos or sin
// [3, b, s, hd] of the t / h / w position rows -> [b, s, hd], frequency i (and its copy at
// hd / 2 + i) from the row of the section it falls in.
Tensor mrope_recompose(const Tensor& t, const std::vector<int64_t>& sections) {
  const int64_t half = t.size(-1) / 2;
  std::vector<Tensor> first, second;
  int64_t at = 0;
  for (size_t k = 0; k < sections.size(); ++k) {
    Tensor row = select(t, 0, int64_t(k % 3));
    first.push_back(slice(row, -1, at, at + sections[k]));
    second.push_back(slice(row, -1, half + at, half + at + sections[k]));
    at += sections[k];
  }
  first.insert(first.end(), second.begin(), second.end());
  return cat(first, -1);
}

}  // namespace

// Trace-friendly: batch and seq are only used as SymInts, positions and masks are ops.
ModelOutputs DecoderLM::forward(const ModelInputs& in) {
  const bool embedded = in.inputs_embeds.defined();
  if (embedded) {
    INGOT_CHECK(in.inputs_embeds.dim() == 3, ShapeError,
                "[{}] inputs_embeds must be [batch, seq, hidden], got {}", architecture(),
                in.inputs_embeds.shape_string());
  } else {
    check_input_ids(in, architecture());
  }
  if (in.cache) in.cache->check_compatible(*cache_spec());
  const Tensor& first = embedded ? in.inputs_embeds : in.input_ids;
  const SymInt batch = first.sym_size(0), seq = first.sym_size(1);
  // Absolute positions of the new tokens [seq], and the key slots attention sees.
  Tensor positions = in.cache ? in.cache->new_positions(seq) : arange_symint(seq);
  const SymInt key_length = in.cache ? in.cache->key_length(seq) : seq;
  Tensor position_ids =
      in.position_ids.defined() ? in.position_ids : default_position_ids(positions, batch);
  if (in.rope_deltas.defined()) {
    INGOT_CHECK(!in.position_ids.defined() && in.rope_deltas.dim() == 2, ValueError,
                "[{}] rope_deltas must be [batch, 1] and comes without position_ids",
                architecture());
    position_ids = add(position_ids, in.rope_deltas);  // [b, s] + [b, 1]
  }
  const bool mrope = position_ids.dim() == 3;
  INGOT_CHECK(!mrope || (!config_.mrope_section.empty() && position_ids.size(0) == 3), ShapeError,
              "[{}] position_ids {} are [3, batch, seq] only for a model with mrope_section",
              architecture(), position_ids.shape_string());
  Tensor x = embedded ? in.inputs_embeds : embed_tokens_->forward(in.input_ids);  // [b, s, hidden]
  if (config_.embedding_scale != 1.0) x = mul(x, rounded(config_.embedding_scale, x.dtype()));
  auto [cos, sin] = rotary_->forward(position_ids, x.dtype());
  if (mrope) {
    cos = mrope_recompose(cos, config_.mrope_section);
    sin = mrope_recompose(sin, config_.mrope_section);
  }
  Tensor local_cos = cos, local_sin = sin;
  if (local_rotary_)
    std::tie(local_cos, local_sin) = local_rotary_->forward(position_ids, x.dtype());
  // One mask for full-attention layers and one for sliding ones (when any).
  Tensor full_mask = nn::causal_mask(positions, key_length, in.attention_mask, std::nullopt);
  Tensor sliding_mask;
  if (config_.sliding_window) {
    if (in.sliding_windows_on_4d_mask && in.attention_mask.defined() &&
        in.attention_mask.dim() == 4) {
      // [b, 1, q, kv] and [1, 1, q, kv]: the given mask, inside the window.
      sliding_mask = logical_and(
          full_mask, nn::sliding_window_mask(positions, key_length, *config_.sliding_window));
    } else {
      sliding_mask =
          nn::causal_mask(positions, key_length, in.attention_mask, config_.sliding_window);
    }
  }
  ModelOutputs out;
  if (in.output_hidden_states) out.hidden_states.push_back(x);
  for (size_t i = 0; i < layers_->size(); ++i) {
    const bool sliding = config_.sliding_layers[i];
    Tensor c, s;  // undefined: no rotary
    if (config_.rope_layers[i]) {
      c = sliding ? local_cos : cos;
      s = sliding ? local_sin : sin;
    }
    x = layers_->at<DecoderLayer>(i).forward(x, c, s, sliding ? sliding_mask : full_mask, in.cache);
    if (in.output_hidden_states && i + 1 < layers_->size()) out.hidden_states.push_back(x);
  }
  x = norm_->forward(x);
  // transformers reports the final-normed state as the last hidden state.
  if (in.output_hidden_states) out.hidden_states.push_back(x);
  out.last_hidden_state = x;
  out.logits = logits(x);
  return out;
}

Tensor DecoderLM::hidden_from_embeds(const Tensor& inputs_embeds, const Tensor& position_ids,
                                     nn::Cache* cache) {
  ModelInputs in;
  in.inputs_embeds = inputs_embeds;
  in.position_ids = position_ids;
  in.cache = cache;
  return forward(in).last_hidden_state;
}

Tensor DecoderLM::logits(const Tensor& hidden) const {
  // A packed lm_head (a GGUF's Q8_0 / Q4_0 output.weight) runs its own quantized_linear; a
  // tied head on a packed table (a GGUF's Q8_0 token_embd) multiplies with the table's rows.
  Tensor logits;
  if (lm_head_ && lm_head_->is_packed())
    logits = lm_head_->forward(hidden);
  else if (!lm_head_ && embed_tokens_->is_packed())
    logits = quantized_linear(hidden, embed_tokens_->qweight(), embed_tokens_->scales(), Tensor(),
                              Tensor(), 8, embed_tokens_->packed_group());
  else
    logits = linear(hidden, lm_head_ ? lm_head_->weight() : embed_tokens_->weight());
  if (config_.logits_divisor != 1.0) logits = div(logits, config_.logits_divisor);
  if (config_.final_softcap) logits = softcap(logits, *config_.final_softcap);
  return logits;
}

}  // namespace ingot::models
