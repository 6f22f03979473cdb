#include "ingot/models/encdec/whisper.h"

#include <cmath>

#include "ingot/models/encdec/whisper_generation.h"
#include "ingot/nn/attention.h"
#include "ingot/ops/functional.h"

namespace ingot::models {

WhisperConfig WhisperConfig::from_config(const ConfigReader& c) {
  WhisperConfig w;
  w.vocab_size = c.get_int("vocab_size");
  w.d_model = c.get_int("d_model");
  w.num_mel_bins = c.get_int("num_mel_bins", 80);
  w.encoder_layers = c.get_int("encoder_layers");
  w.encoder_heads = c.get_int("encoder_attention_heads");
  w.encoder_ffn_dim = c.get_int("encoder_ffn_dim");
  w.decoder_layers = c.get_int("decoder_layers");
  w.decoder_heads = c.get_int("decoder_attention_heads");
  w.decoder_ffn_dim = c.get_int("decoder_ffn_dim");
  w.max_source_positions = c.get_int("max_source_positions", 1500);
  w.max_target_positions = c.get_int("max_target_positions", 448);
  w.activation = c.get_string("activation_function", "gelu");
  nn::check_activation(w.activation);
  w.scale_embedding = c.get_bool("scale_embedding", false);
  w.decoder_start_token_id = c.get_int("decoder_start_token_id", 50258);
  for (int64_t heads : {w.encoder_heads, w.decoder_heads}) {
    INGOT_CHECK(heads > 0 && w.d_model % heads == 0, IoError,
                "[config] '{}': d_model {} is not a multiple of the attention heads {}", c.origin(),
                w.d_model, heads);
  }
  INGOT_CHECK(w.max_source_positions > 0 && w.max_target_positions > 0 && w.num_mel_bins > 0,
              IoError,
              "[config] '{}': max_source_positions, max_target_positions and num_mel_bins "
              "must be positive",
              c.origin());
  return w;
}

namespace {

// WhisperAttention: q / v / out projections with bias, k without. `heads` of d / heads.
class WhisperAttention : public nn::Module {
 public:
  WhisperAttention(int64_t d, int64_t heads, DType dtype)
      : nn::Module("WhisperAttention"), d_(d), heads_(heads) {
    k_proj_ = register_module("k_proj", std::make_shared<nn::Linear>(d, d, false, dtype));
    v_proj_ = register_module("v_proj", std::make_shared<nn::Linear>(d, d, true, dtype));
    q_proj_ = register_module("q_proj", std::make_shared<nn::Linear>(d, d, true, dtype));
    out_proj_ = register_module("out_proj", std::make_shared<nn::Linear>(d, d, true, dtype));
  }
  // [b, s, d] -> [b, heads, s, head_dim]
  Tensor split(const Tensor& t) const {
    return transpose(view(t, {t.sym_size(0), t.sym_size(1), SymInt(heads_), SymInt(d_ / heads_)}),
                     1, 2);
  }
  Tensor keys(const Tensor& x) const { return split(k_proj_->forward(x)); }
  Tensor values(const Tensor& x) const { return split(v_proj_->forward(x)); }
  // Queries of x [b, q, d] over k / v [b, heads, kv, head_dim] (mask bool [.., q, kv] or
  // undefined) -> [b, q, d]. The queries are scaled before the product (transformers).
  Tensor attend(const Tensor& x, const Tensor& k, const Tensor& v, const Tensor& mask) const {
    const double scaling = 1.0 / std::sqrt(double(d_ / heads_));
    Tensor q = split(mul(q_proj_->forward(x), scaling));
    std::optional<Tensor> m;
    if (mask.defined()) m = mask;
    Tensor a = scaled_dot_product_attention(q, k, v, m, false, 1.0);  // [b, heads, q, hd]
    a = reshape(transpose(a, 1, 2), {x.sym_size(0), x.sym_size(1), SymInt(d_)});
    return out_proj_->forward(a);
  }

 private:
  int64_t d_, heads_;
  std::shared_ptr<nn::Linear> k_proj_, v_proj_, q_proj_, out_proj_;
};

std::shared_ptr<nn::LayerNorm> layer_norm(int64_t d, DType dtype) {
  return std::make_shared<nn::LayerNorm>(d, 1e-5, true, dtype);
}

class WhisperEncoderLayer : public nn::Module {
 public:
  WhisperEncoderLayer(const WhisperConfig& c, DType dtype)
      : nn::Module("WhisperEncoderLayer"), act_(c.activation) {
    self_attn_ = register_module(
        "self_attn", std::make_shared<WhisperAttention>(c.d_model, c.encoder_heads, dtype));
    self_attn_layer_norm_ = register_module("self_attn_layer_norm", layer_norm(c.d_model, dtype));
    fc1_ = register_module("fc1",
                           std::make_shared<nn::Linear>(c.d_model, c.encoder_ffn_dim, true, dtype));
    fc2_ = register_module("fc2",
                           std::make_shared<nn::Linear>(c.encoder_ffn_dim, c.d_model, true, dtype));
    final_layer_norm_ = register_module("final_layer_norm", layer_norm(c.d_model, dtype));
  }
  Tensor forward(const Tensor& x) const {  // [b, s, d] -> same, bidirectional attention
    Tensor h = self_attn_layer_norm_->forward(x);
    Tensor r = add(x, self_attn_->attend(h, self_attn_->keys(h), self_attn_->values(h), Tensor()));
    Tensor m = fc2_->forward(nn::activation(act_, fc1_->forward(final_layer_norm_->forward(r))));
    return add(r, m);
  }

 private:
  std::string act_;
  std::shared_ptr<WhisperAttention> self_attn_;
  std::shared_ptr<nn::LayerNorm> self_attn_layer_norm_, final_layer_norm_;
  std::shared_ptr<nn::Linear> fc1_, fc2_;
};

// Conv1d's parameters (weight [out, in, 3], bias [out]), run as three shifted matmuls.
class WhisperConv1d : public nn::Module {
 public:
  WhisperConv1d(int64_t in, int64_t out, int64_t stride, DType dtype)
      : nn::Module("Conv1d"), in_(in), out_(out), stride_(stride) {
    weight_ = register_parameter("weight", nn::placeholder({out, in, 3}, dtype));
    bias_ = register_parameter("bias", nn::placeholder({out}, dtype));
  }
  // x [b, frames, in] (time-major) -> [b, frames_out, out]: kernel 3, padding 1, the
  // stride's frames_out = (frames - 1) / stride + 1. Each output frame t reads the padded
  // input's frames t * stride + {0, 1, 2}; the three taps are concatenated along the
  // channels and multiplied by the kernel flattened in the same (tap, channel) order.
  Tensor forward(const Tensor& x) const {
    const SymInt b = x.sym_size(0);
    const int64_t frames = x.size(1), frames_out = (frames - 1) / stride_ + 1;
    Tensor zero = zeros_symint({b, SymInt(1), SymInt(in_)}, x.dtype());
    Tensor padded = cat({zero, x, zero}, 1);  // [b, frames + 2, in]
    std::vector<Tensor> taps;
    for (int64_t k = 0; k < 3; ++k)
      taps.push_back(
          slice(padded, 1, SymInt(k), SymInt(k + stride_ * (frames_out - 1) + 1), SymInt(stride_)));
    Tensor cols = cat(taps, 2);  // [b, frames_out, 3 in]
    Tensor kernel = reshape(permute(*weight_, {0, 2, 1}), {SymInt(out_), SymInt(3 * in_)});
    return linear(cols, kernel, *bias_);
  }

 private:
  int64_t in_, out_, stride_;
  Tensor *weight_, *bias_;
};

}  // namespace

class WhisperEncoder : public nn::Module {
 public:
  WhisperEncoder(const WhisperConfig& c, DType dtype) : nn::Module("WhisperEncoder"), c_(c) {
    conv1_ = register_module("conv1",
                             std::make_shared<WhisperConv1d>(c.num_mel_bins, c.d_model, 1, dtype));
    conv2_ =
        register_module("conv2", std::make_shared<WhisperConv1d>(c.d_model, c.d_model, 2, dtype));
    embed_positions_ =
        register_module("embed_positions",
                        std::make_shared<nn::Embedding>(c.max_source_positions, c.d_model, dtype));
    layers_ = register_module("layers", std::make_shared<nn::ModuleList>());
    for (int64_t i = 0; i < c.encoder_layers; ++i)
      layers_->append(std::make_shared<WhisperEncoderLayer>(c, dtype));
    layer_norm_ = register_module("layer_norm", layer_norm(c.d_model, dtype));
  }
  Tensor forward(const Tensor& features) const {
    INGOT_CHECK(features.dim() == 3 && features.size(1) == c_.num_mel_bins &&
                    features.size(2) == c_.input_frames(),
                ShapeError,
                "[WhisperEncoder] input_features must be [batch, {}, {}] (num_mel_bins, 2 * "
                "max_source_positions), got {}: pad or truncate the audio as the feature "
                "extractor does (preprocessor_config.json)",
                c_.num_mel_bins, c_.input_frames(), features.shape_string());
    Tensor x = transpose(features, 1, 2);  // [b, frames, mels]
    x = gelu(conv1_->forward(x));
    x = gelu(conv2_->forward(x));  // [b, source, d]
    x = add(x, unsqueeze(embed_positions_->weight(), 0));
    for (size_t i = 0; i < layers_->size(); ++i) x = layers_->at<WhisperEncoderLayer>(i).forward(x);
    return layer_norm_->forward(x);
  }

 private:
  WhisperConfig c_;
  std::shared_ptr<WhisperConv1d> conv1_, conv2_;
  std::shared_ptr<nn::Embedding> embed_positions_;
  std::shared_ptr<nn::ModuleList> layers_;
  std::shared_ptr<nn::LayerNorm> layer_norm_;
};

namespace {

class WhisperDecoderLayer : public nn::Module {
 public:
  WhisperDecoderLayer(const WhisperConfig& c, size_t index, DType dtype)
      : nn::Module("WhisperDecoderLayer"), act_(c.activation), index_(index) {
    self_attn_ = register_module(
        "self_attn", std::make_shared<WhisperAttention>(c.d_model, c.decoder_heads, dtype));
    self_attn_layer_norm_ = register_module("self_attn_layer_norm", layer_norm(c.d_model, dtype));
    encoder_attn_ = register_module(
        "encoder_attn", std::make_shared<WhisperAttention>(c.d_model, c.decoder_heads, dtype));
    encoder_attn_layer_norm_ =
        register_module("encoder_attn_layer_norm", layer_norm(c.d_model, dtype));
    fc1_ = register_module("fc1",
                           std::make_shared<nn::Linear>(c.d_model, c.decoder_ffn_dim, true, dtype));
    fc2_ = register_module("fc2",
                           std::make_shared<nn::Linear>(c.decoder_ffn_dim, c.d_model, true, dtype));
    final_layer_norm_ = register_module("final_layer_norm", layer_norm(c.d_model, dtype));
  }
  const WhisperAttention& encoder_attn() const { return *encoder_attn_; }
  // x [b, t, d]; mask causal over the key slots; cross_k / cross_v [b, heads, source, hd].
  Tensor forward(const Tensor& x, const Tensor& mask, const Tensor& cross_k, const Tensor& cross_v,
                 nn::Cache* cache) const {
    Tensor h = self_attn_layer_norm_->forward(x);
    Tensor k = self_attn_->keys(h), v = self_attn_->values(h);
    if (cache) std::tie(k, v) = cache->update(index_, k, v);
    Tensor r = add(x, self_attn_->attend(h, k, v, mask));
    Tensor c = encoder_attn_layer_norm_->forward(r);
    r = add(r, encoder_attn_->attend(c, cross_k, cross_v, Tensor()));
    Tensor m = fc2_->forward(nn::activation(act_, fc1_->forward(final_layer_norm_->forward(r))));
    return add(r, m);
  }

 private:
  std::string act_;
  size_t index_;
  std::shared_ptr<WhisperAttention> self_attn_, encoder_attn_;
  std::shared_ptr<nn::LayerNorm> self_attn_layer_norm_, encoder_attn_layer_norm_, final_layer_norm_;
  std::shared_ptr<nn::Linear> fc1_, fc2_;
};

}  // namespace

class WhisperDecoder : public nn::Module {
 public:
  WhisperDecoder(const WhisperConfig& c, DType dtype) : nn::Module("WhisperDecoder"), c_(c) {
    embed_tokens_ = register_module(
        "embed_tokens", std::make_shared<nn::Embedding>(c.vocab_size, c.d_model, dtype));
    embed_positions_ =
        register_module("embed_positions",
                        std::make_shared<nn::Embedding>(c.max_target_positions, c.d_model, dtype));
    layers_ = register_module("layers", std::make_shared<nn::ModuleList>());
    for (int64_t i = 0; i < c.decoder_layers; ++i)
      layers_->append(std::make_shared<WhisperDecoderLayer>(c, size_t(i), dtype));
    layer_norm_ = register_module("layer_norm", layer_norm(c.d_model, dtype));
  }
  CrossAttentionCache cross(const Tensor& enc) const {
    CrossAttentionCache kv;
    for (size_t i = 0; i < layers_->size(); ++i) {
      const WhisperAttention& a = layers_->at<WhisperDecoderLayer>(i).encoder_attn();
      kv.keys.push_back(a.keys(enc));
      kv.values.push_back(a.values(enc));
    }
    return kv;
  }
  Tensor forward(const Tensor& ids, const CrossAttentionCache& cross, nn::Cache* cache) const {
    INGOT_CHECK(ids.dim() == 2, ShapeError,
                "[WhisperDecoder] decoder_input_ids must be [batch, tokens], got {}",
                ids.shape_string());
    INGOT_CHECK(cross.keys.size() == layers_->size() && cross.values.size() == layers_->size(),
                ValueError,
                "[WhisperDecoder] the cross-attention cache has {} layers, the decoder {}",
                cross.keys.size(), layers_->size());
    const SymInt t = ids.sym_size(1);
    // Absolute positions of the new tokens [t], also the learned position rows.
    Tensor positions = cache ? cache->new_positions(t) : arange_symint(t);
    const SymInt key_length = cache ? cache->key_length(t) : t;
    Tensor x = embed_tokens_->forward(ids);  // [b, t, d]
    if (c_.scale_embedding) x = mul(x, std::sqrt(double(c_.d_model)));
    x = add(x, index_select(embed_positions_->weight(), 0, positions));
    Tensor mask = nn::causal_mask(positions, key_length, Tensor(), std::nullopt);
    for (size_t i = 0; i < layers_->size(); ++i)
      x = layers_->at<WhisperDecoderLayer>(i).forward(x, mask, cross.keys[i], cross.values[i],
                                                      cache);
    return layer_norm_->forward(x);
  }
  const Tensor& embed_weight() const { return embed_tokens_->weight(); }

 private:
  WhisperConfig c_;
  std::shared_ptr<nn::Embedding> embed_tokens_, embed_positions_;
  std::shared_ptr<nn::ModuleList> layers_;
  std::shared_ptr<nn::LayerNorm> layer_norm_;
};

WhisperForConditionalGeneration::WhisperForConditionalGeneration(const ConfigReader& c,
                                                                 const LoadOptions& o)
    : EncoderDecoderModel("WhisperForConditionalGeneration"), c_(WhisperConfig::from_config(c)) {
  auto model = register_module("model", std::make_shared<nn::Container>("WhisperModel"));
  encoder_ = model->add("encoder", std::make_shared<WhisperEncoder>(c_, o.compute_dtype));
  decoder_ = model->add("decoder", std::make_shared<WhisperDecoder>(c_, o.compute_dtype));
}

std::optional<nn::CacheSpec> WhisperForConditionalGeneration::cache_spec() const {
  return nn::CacheSpec{c_.decoder_layers, c_.decoder_heads, c_.d_model / c_.decoder_heads,
                       decoder_->embed_weight().dtype()};
}

EncoderInput WhisperForConditionalGeneration::encoder_input() const {
  EncoderInput in;
  in.name = "input_features";
  in.example_shape = {1, c_.num_mel_bins, c_.input_frames()};
  in.dtype = compute_dtype();
  return in;
}

std::vector<int64_t> WhisperForConditionalGeneration::decoder_prompt(
    const std::string& model_folder) const {
  const WhisperGenerationConfig g = WhisperGenerationConfig::from_folder(model_folder);
  // The language comes from the audio: the prompt's rest is built per input
  // (runtime::Generator::set_decoder_prompt_builder; ingot generate sets it).
  if (g.needs_language_detection()) return {g.decoder_start_token_id};
  return g.decoder_prompt();
}

Tensor WhisperForConditionalGeneration::encode(const Tensor& input_features) {
  return encoder_->forward(input_features);
}

CrossAttentionCache WhisperForConditionalGeneration::cross_attention_cache(const Tensor& enc) {
  INGOT_CHECK(enc.dim() == 3 && enc.size(2) == c_.d_model, ShapeError,
              "[WhisperForConditionalGeneration] encoder_hidden_states must be [batch, source, "
              "{}], got {}",
              c_.d_model, enc.shape_string());
  return decoder_->cross(enc);
}

Tensor WhisperForConditionalGeneration::decoder_hidden(const Tensor& ids,
                                                       const CrossAttentionCache& cross,
                                                       nn::Cache* cache) const {
  if (cache) cache->check_compatible(*cache_spec());
  return decoder_->forward(ids, cross, cache);
}

Tensor WhisperForConditionalGeneration::lm_head(const Tensor& hidden) const {
  return linear(hidden, decoder_->embed_weight());
}

ModelOutputs WhisperForConditionalGeneration::forward(const ModelInputs& in) {
  INGOT_CHECK(in.input_features.defined() && in.decoder_input_ids.defined(), ValueError,
              "[{}] forward needs input_features and decoder_input_ids", architecture());
  ModelOutputs out;
  out.last_hidden_state = decoder_hidden(
      in.decoder_input_ids, cross_attention_cache(encode(in.input_features)), in.cache);
  out.logits = lm_head(out.last_hidden_state);
  return out;
}

namespace {
const ArchitectureRegistrar kWhisper("WhisperForConditionalGeneration", [](const ConfigReader& c,
                                                                           const LoadOptions& o) {
  return std::make_shared<WhisperForConditionalGeneration>(c, o);
});
}  // namespace

}  // namespace ingot::models
