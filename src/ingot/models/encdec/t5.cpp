// T5ForConditionalGeneration (transformers' modeling_t5.py): an encoder and a decoder
// stack of pre-norm blocks with T5's RMS layer norm (no mean, no bias), attention without
// score scaling plus a learned relative-position bias (computed by the first block of
// each stack and shared by the others), and a ReLU (T5 v1.0) or gated-GELU (v1.1) MLP.
// Checkpoint names: shared.weight (the embedding of both stacks),
// {encoder,decoder}.block.N.layer.0.{SelfAttention.{q,k,v,o}, layer_norm} (block 0 also
// SelfAttention.relative_attention_bias), decoder.block.N.layer.1.{EncDecAttention.
// {q,k,v,o}, layer_norm}, the last layer.{DenseReluDense.{wi | wi_0, wi_1, wo},
// layer_norm}, {encoder,decoder}.final_layer_norm, lm_head.weight (absent: tied to
// shared). With scale_decoder_outputs (default: tie_word_embeddings is not false) the
// decoder output is multiplied by d_model**-0.5 before the LM head.
#include "ingot/models/encdec/t5.h"

#include <array>
#include <cmath>
#include <limits>

#include "ingot/models/encdec/encoder_decoder.h"
#include "ingot/nn/attention.h"
#include "ingot/ops/functional.h"

namespace ingot::models {

std::vector<int64_t> t5_relative_position_buckets(bool bidirectional, int64_t num_buckets,
                                                  int64_t max_distance) {
  INGOT_CHECK(num_buckets >= 4 && max_distance >= 1, ValueError,
              "[T5] relative_attention_num_buckets {} must be >= 4 and "
              "relative_attention_max_distance {} >= 1",
              num_buckets, max_distance);
  std::vector<int64_t> table;
  for (int64_t r = -max_distance; r <= max_distance; ++r) {
    int64_t buckets = num_buckets, bucket = 0, n = 0;
    if (bidirectional) {
      buckets /= 2;
      bucket = r > 0 ? buckets : 0;
      n = r < 0 ? -r : r;
    } else {
      n = r < 0 ? -r : 0;
    }
    const int64_t max_exact = buckets / 2;
    if (n < max_exact) {
      bucket += n;
    } else {
      // float32 throughout, as torch evaluates log(n / max_exact) / log(max_distance /
      // max_exact) * (buckets - max_exact) on a float tensor, then truncates.
      const float ratio = float(n) / float(max_exact);
      const float scaled = std::log(ratio) /
                           float(std::log(double(max_distance) / double(max_exact))) *
                           float(buckets - max_exact);
      bucket += std::min<int64_t>(max_exact + int64_t(scaled), buckets - 1);
    }
    table.push_back(bucket);
  }
  return table;
}

namespace {

struct T5Config {
  int64_t vocab_size = 0, d_model = 0, d_kv = 0, d_ff = 0, num_heads = 0;
  int64_t num_layers = 0, num_decoder_layers = 0;
  int64_t num_buckets = 32, max_distance = 128;
  double eps = 1e-6;
  std::string act = "relu";
  bool gated = false;
  bool scale_decoder_outputs = true;
  int64_t decoder_start_token_id = 0;
  int64_t inner() const { return num_heads * d_kv; }

  static T5Config from_config(const ConfigReader& c) {
    T5Config t;
    t.vocab_size = c.get_int("vocab_size", 32128);
    t.d_model = c.get_int("d_model", 512);
    t.d_kv = c.get_int("d_kv", 64);
    t.d_ff = c.get_int("d_ff", 2048);
    t.num_heads = c.get_int("num_heads", 8);
    t.num_layers = c.get_int("num_layers", 6);
    t.num_decoder_layers = c.get_int("num_decoder_layers", t.num_layers);
    t.num_buckets = c.get_int("relative_attention_num_buckets", 32);
    t.max_distance = c.get_int("relative_attention_max_distance", 128);
    t.eps = c.get_double("layer_norm_epsilon", 1e-6);
    // feed_forward_proj "ACT" or "gated-ACT"; "gated-gelu" means gelu_new (transformers).
    const std::string ff = c.get_string("feed_forward_proj", "relu");
    const size_t dash = ff.find('-');
    INGOT_CHECK(dash == std::string::npos ||
                    (ff.substr(0, dash) == "gated" && ff.find('-', dash + 1) == std::string::npos),
                IoError,
                "[config] '{}': feed_forward_proj '{}' must be 'ACT' or 'gated-ACT' (e.g. 'relu', "
                "'gated-gelu')",
                c.origin(), ff);
    t.gated = dash != std::string::npos;
    t.act = ff == "gated-gelu" ? "gelu_new" : ff.substr(dash == std::string::npos ? 0 : dash + 1);
    nn::check_activation(t.act);
    // Original T5 rescales the decoder output before its (tied) LM head; v1.1 configs say
    // tie_word_embeddings false (older files) or scale_decoder_outputs false (newer).
    t.scale_decoder_outputs = c.has("scale_decoder_outputs")
                                  ? c.get_bool("scale_decoder_outputs", true)
                                  : c.get_bool("tie_word_embeddings", true);
    t.decoder_start_token_id = c.get_int("decoder_start_token_id", c.get_int("pad_token_id", 0));
    INGOT_CHECK(t.num_heads > 0 && t.d_kv > 0 && t.d_model > 0 && t.num_layers > 0 &&
                    t.num_decoder_layers > 0,
                IoError,
                "[config] '{}': d_model, d_kv, num_heads, num_layers and num_decoder_layers must "
                "be positive",
                c.origin());
    return t;
  }
};

// [b, s, inner] -> [b, heads, s, d_kv]
Tensor split_heads(const Tensor& t, int64_t heads, int64_t d_kv) {
  return transpose(view(t, {t.sym_size(0), t.sym_size(1), SymInt(heads), SymInt(d_kv)}), 1, 2);
}

// T5Attention: q, k, v, o without bias; scores unscaled; optional relative-position bias.
class T5Attention : public nn::Module {
 public:
  T5Attention(const T5Config& c, bool relative_bias, bool bidirectional, DType dtype)
      : nn::Module("T5Attention"), c_(c) {
    auto proj = [&](const char* name, int64_t in, int64_t out) {
      return register_module(name, std::make_shared<nn::Linear>(in, out, false, dtype));
    };
    q_ = proj("q", c.d_model, c.inner());
    k_ = proj("k", c.d_model, c.inner());
    v_ = proj("v", c.d_model, c.inner());
    o_ = proj("o", c.inner(), c.d_model);
    if (relative_bias) {
      bias_ = register_module("relative_attention_bias",
                              std::make_shared<nn::Embedding>(c.num_buckets, c.num_heads, dtype));
      const std::vector<int64_t> table =
          t5_relative_position_buckets(bidirectional, c.num_buckets, c.max_distance);
      buckets_ = register_buffer("relative_position_buckets",
                                 Tensor::from_vector(table, {int64_t(table.size())}),
                                 /*persistent=*/false);
    }
  }

  // The bias [1, heads, q, keys] for queries at `query_positions` [q] over key slots
  // [0, key_length): relative_attention_bias[bucket(key - query)].
  Tensor compute_bias(const Tensor& query_positions, const SymInt& key_length) const {
    const SymInt q = query_positions.sym_size(0);
    Tensor memory = unsqueeze(arange_symint(key_length, DType::I64), 0);      // [1, k]
    Tensor rel = sub(memory, unsqueeze(to(query_positions, DType::I64), 1));  // [q, k]
    Tensor index =
        add(clamp(rel, Scalar(-c_.max_distance), Scalar(c_.max_distance)), Scalar(c_.max_distance));
    Tensor buckets = view(index_select(*buckets_, 0, flatten(index)), {q, key_length});
    Tensor values = bias_->forward(buckets);          // [q, k, heads]
    return unsqueeze(permute(values, {2, 0, 1}), 0);  // [1, h, q, k]
  }

  // Heads of k / v projections of `states` [b, s, d_model] -> [b, heads, s, d_kv].
  std::pair<Tensor, Tensor> project_kv(const Tensor& states) const {
    return {split_heads(k_->forward(states), c_.num_heads, c_.d_kv),
            split_heads(v_->forward(states), c_.num_heads, c_.d_kv)};
  }

  // x [b, s, d_model]; keys / values [b, heads, keys, d_kv]; bias additive, broadcastable
  // to [b, heads, s, keys] (undefined: none).
  Tensor attend(const Tensor& x, const Tensor& keys, const Tensor& values,
                const Tensor& bias) const {
    Tensor q = split_heads(q_->forward(x), c_.num_heads, c_.d_kv);
    Tensor a = scaled_dot_product_attention(
        q, keys, values, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, false, 1.0);
    a = reshape(transpose(a, 1, 2), {x.sym_size(0), x.sym_size(1), SymInt(c_.inner())});
    return o_->forward(a);
  }

 private:
  T5Config c_;
  std::shared_ptr<nn::Linear> q_, k_, v_, o_;
  std::shared_ptr<nn::Embedding> bias_;
  Tensor* buckets_ = nullptr;
};

// wo(act(wi(x))) — T5DenseActDense.
class T5DenseActDense : public nn::FeedForward {
 public:
  T5DenseActDense(const T5Config& c, DType dtype)
      : nn::FeedForward("T5DenseActDense"), act_(c.act) {
    wi_ = register_module("wi", std::make_shared<nn::Linear>(c.d_model, c.d_ff, false, dtype));
    wo_ = register_module("wo", std::make_shared<nn::Linear>(c.d_ff, c.d_model, false, dtype));
  }
  Tensor forward(const Tensor& x) const override {
    return wo_->forward(nn::activation(act_, wi_->forward(x)));
  }

 private:
  std::string act_;
  std::shared_ptr<nn::Linear> wi_, wo_;
};

// One sub-layer: layer_norm, then the attention or MLP, added to the residual.
class T5Sublayer : public nn::Container {
 public:
  T5Sublayer(const char* type, const T5Config& c, DType dtype) : nn::Container(type) {
    layer_norm_ = add("layer_norm", std::make_shared<nn::RMSNorm>(c.d_model, c.eps, dtype));
  }
  Tensor norm(const Tensor& x) const { return layer_norm_->forward(x); }

 private:
  std::shared_ptr<nn::RMSNorm> layer_norm_;
};

class T5Block : public nn::Module {
 public:
  T5Block(const T5Config& c, bool decoder, bool relative_bias, DType dtype)
      : nn::Module("T5Block") {
    auto layers = register_module("layer", std::make_shared<nn::ModuleList>());
    self_ = std::make_shared<T5Sublayer>("T5LayerSelfAttention", c, dtype);
    self_attn_ = register_child(*self_, "SelfAttention",
                                std::make_shared<T5Attention>(c, relative_bias, !decoder, dtype));
    layers->append(self_);
    if (decoder) {
      cross_ = std::make_shared<T5Sublayer>("T5LayerCrossAttention", c, dtype);
      cross_attn_ = register_child(*cross_, "EncDecAttention",
                                   std::make_shared<T5Attention>(c, false, false, dtype));
      layers->append(cross_);
    }
    ff_ = std::make_shared<T5Sublayer>("T5LayerFF", c, dtype);
    if (c.gated) {
      mlp_ = register_child(
          *ff_, "DenseReluDense",
          std::make_shared<nn::GatedMLP>(c.d_model, c.d_ff, c.act, false, dtype, false,
                                         std::array<const char*, 3>{"wi_0", "wi_1", "wo"}));
    } else {
      mlp_ = register_child(*ff_, "DenseReluDense", std::make_shared<T5DenseActDense>(c, dtype));
    }
    layers->append(ff_);
  }

  const T5Attention& self_attention() const { return *self_attn_; }
  const T5Attention& cross_attention() const { return *cross_attn_; }

  // Encoder block: x [b, s, d]; bias [1 or b, h, s, s] (relative bias + padding).
  Tensor encode(const Tensor& x, const Tensor& bias) const {
    Tensor n = self_->norm(x);
    auto [k, v] = self_attn_->project_kv(n);
    Tensor h = add(x, self_attn_->attend(n, k, v, bias));
    return add(h, mlp_->forward(ff_->norm(h)));
  }

  // Decoder block `layer`: self-attention through `cache` (or over the new tokens alone),
  // cross-attention over `cross_k` / `cross_v` with `cross_bias` (padding or undefined).
  Tensor decode(const Tensor& x, const Tensor& self_bias, size_t layer, nn::Cache* cache,
                const Tensor& cross_k, const Tensor& cross_v, const Tensor& cross_bias) const {
    Tensor n = self_->norm(x);
    auto [k, v] = self_attn_->project_kv(n);
    if (cache) std::tie(k, v) = cache->update(layer, k, v);
    Tensor h = add(x, self_attn_->attend(n, k, v, self_bias));
    h = add(h, cross_attn_->attend(cross_->norm(h), cross_k, cross_v, cross_bias));
    return add(h, mlp_->forward(ff_->norm(h)));
  }

 private:
  // Registers `m` as child `name` of the sub-layer `parent` (the sub-layers are the
  // ModuleList entries "layer.N"), returning it.
  template <typename M>
  static std::shared_ptr<M> register_child(T5Sublayer& parent, const char* name,
                                           std::shared_ptr<M> m) {
    return parent.add(name, std::move(m));
  }

  std::shared_ptr<T5Sublayer> self_, cross_, ff_;
  std::shared_ptr<T5Attention> self_attn_, cross_attn_;
  std::shared_ptr<nn::FeedForward> mlp_;
};

// The additive mask of 0/1 `attention_mask` [b, keys]: 0 where attended, -inf where not,
// [b, 1, 1, keys].
Tensor padding_bias(const Tensor& attention_mask, DType dtype) {
  Tensor keep = unsqueeze(unsqueeze(ne(attention_mask, 0), 1), 1);
  return masked_fill(
      zeros_symint({attention_mask.sym_size(0), SymInt(1), SymInt(1), attention_mask.sym_size(1)},
                   dtype),
      logical_not(keep), -std::numeric_limits<double>::infinity());
}

class T5ForConditionalGeneration : public EncoderDecoderModel {
 public:
  T5ForConditionalGeneration(const T5Config& c, DType dtype)
      : EncoderDecoderModel("T5ForConditionalGeneration"), c_(c) {
    shared_ =
        register_module("shared", std::make_shared<nn::Embedding>(c.vocab_size, c.d_model, dtype));
    auto stack = [&](const char* name, int64_t n, bool decoder,
                     std::shared_ptr<nn::ModuleList>& blocks,
                     std::shared_ptr<nn::RMSNorm>& final_norm) {
      auto s = register_module(name, std::make_shared<nn::Container>("T5Stack"));
      blocks = s->add("block", std::make_shared<nn::ModuleList>());
      for (int64_t i = 0; i < n; ++i)
        blocks->append(std::make_shared<T5Block>(c, decoder, i == 0, dtype));
      final_norm =
          s->add("final_layer_norm", std::make_shared<nn::RMSNorm>(c.d_model, c.eps, dtype));
    };
    stack("encoder", c.num_layers, false, encoder_, encoder_norm_);
    stack("decoder", c.num_decoder_layers, true, decoder_, decoder_norm_);
    lm_head_ = register_module("lm_head",
                               std::make_shared<nn::Linear>(c.d_model, c.vocab_size, false, dtype));
  }

  std::vector<std::string> input_names() const override {
    return {"input_ids", "attention_mask", "decoder_input_ids"};
  }
  std::optional<nn::CacheSpec> cache_spec() const override {
    return nn::CacheSpec{c_.num_decoder_layers, c_.num_heads, c_.d_kv, shared_->weight().dtype()};
  }
  EncoderInput encoder_input() const override {
    return {"input_ids", {1, 6}, DType::I64, {1}, 4096};
  }
  int64_t decoder_start_token_id() const override { return c_.decoder_start_token_id; }

  // lm_head.weight is the file's own when it has one (T5 v1.1, untied), else the shared
  // embedding (transformers ties them unless both are stored and differ); the stacks'
  // embed_tokens copies of shared are ignored.
  std::map<std::string, std::string> tied_weights() const override {
    return {{"lm_head.weight", "shared.weight"},
            {"encoder.embed_tokens.weight", "shared.weight"},
            {"decoder.embed_tokens.weight", "shared.weight"}};
  }
  std::vector<std::string> ignored_checkpoint_names() const override {
    return {"decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"};
  }

  // Hugging Face forward: input_ids (+ attention_mask) through the encoder, then
  // decoder_input_ids (through `cache` when given) -> logits.
  ModelOutputs forward(const ModelInputs& in) override {
    check_input_ids(in, architecture());
    INGOT_CHECK(in.decoder_input_ids.defined() && in.decoder_input_ids.dim() == 2, ValueError,
                "[{}] decoder_input_ids [batch, tokens] is required (the decoder's prompt starts "
                "with decoder_start_token_id {})",
                architecture(), c_.decoder_start_token_id);
    Tensor enc = encode_masked(in.input_ids, in.attention_mask);
    Tensor cross_bias =
        in.attention_mask.defined() ? padding_bias(in.attention_mask, enc.dtype()) : Tensor();
    ModelOutputs out;
    out.logits =
        decode_masked(in.decoder_input_ids, cross_attention_cache(enc), in.cache, cross_bias);
    return out;
  }

  Tensor encode(const Tensor& input_ids) override {
    INGOT_CHECK(input_ids.defined() && input_ids.dim() == 2, ShapeError,
                "[{}] the encoder input input_ids must be [batch, source tokens], got {}",
                architecture(), input_ids.defined() ? input_ids.shape_string() : "nothing");
    return encode_masked(input_ids, Tensor());
  }

  CrossAttentionCache cross_attention_cache(const Tensor& encoder_hidden_states) override {
    INGOT_CHECK(encoder_hidden_states.dim() == 3 && encoder_hidden_states.size(2) == c_.d_model,
                ShapeError, "[{}] encoder_hidden_states must be [batch, source, {}], got {}",
                architecture(), c_.d_model, encoder_hidden_states.shape_string());
    CrossAttentionCache cross;
    for (size_t i = 0; i < decoder_->size(); ++i) {
      auto [k, v] = decoder_->at<T5Block>(i).cross_attention().project_kv(encoder_hidden_states);
      cross.keys.push_back(k);
      cross.values.push_back(v);
    }
    return cross;
  }

  Tensor decode(const Tensor& decoder_input_ids, const CrossAttentionCache& cross,
                nn::Cache* cache) override {
    return decode_masked(decoder_input_ids, cross, cache, Tensor());
  }

 private:
  Tensor encode_masked(const Tensor& input_ids, const Tensor& attention_mask) {
    Tensor x = shared_->forward(input_ids);  // [b, s, d]
    const SymInt s = x.sym_size(1);
    Tensor bias =
        encoder_->at<T5Block>(0).self_attention().compute_bias(arange_symint(s, DType::I64), s);
    if (attention_mask.defined()) bias = add(bias, padding_bias(attention_mask, x.dtype()));
    for (size_t i = 0; i < encoder_->size(); ++i) x = encoder_->at<T5Block>(i).encode(x, bias);
    return encoder_norm_->forward(x);
  }

  Tensor decode_masked(const Tensor& ids, const CrossAttentionCache& cross, nn::Cache* cache,
                       const Tensor& cross_bias) {
    INGOT_CHECK(ids.dim() == 2, ShapeError,
                "[{}] decoder_input_ids must be [batch, tokens], got {}", architecture(),
                ids.shape_string());
    INGOT_CHECK(cross.num_layers() == decoder_->size(), ValueError,
                "[{}] the cross-attention cache has {} layers, the decoder {}", architecture(),
                cross.num_layers(), decoder_->size());
    if (cache) cache->check_compatible(*cache_spec());
    const SymInt t = ids.sym_size(1);
    Tensor positions = cache ? cache->new_positions(t) : arange_symint(t, DType::I64);  // [t]
    const SymInt keys = cache ? cache->key_length(t) : t;
    // The relative bias with the causal mask (which also hides a static cache's empty slots).
    Tensor bias = decoder_->at<T5Block>(0).self_attention().compute_bias(positions, keys);
    Tensor causal = nn::causal_mask(positions, keys, Tensor(), std::nullopt);  // [1, 1, t, keys]
    bias = masked_fill(bias, logical_not(causal), -std::numeric_limits<double>::infinity());
    Tensor x = shared_->forward(ids);
    for (size_t i = 0; i < decoder_->size(); ++i) {
      x = decoder_->at<T5Block>(i).decode(x, bias, i, cache, cross.keys[i], cross.values[i],
                                          cross_bias);
    }
    x = decoder_norm_->forward(x);
    if (c_.scale_decoder_outputs) x = mul(x, std::pow(double(c_.d_model), -0.5));
    return lm_head_->forward(x);
  }

  T5Config c_;
  std::shared_ptr<nn::Embedding> shared_;
  std::shared_ptr<nn::ModuleList> encoder_, decoder_;
  std::shared_ptr<nn::RMSNorm> encoder_norm_, decoder_norm_;
  std::shared_ptr<nn::Linear> lm_head_;  // its weight may be shared's (tied)
};

const ArchitectureRegistrar kT5("T5ForConditionalGeneration", [](const ConfigReader& c,
                                                                 const LoadOptions& o) {
  return std::make_shared<T5ForConditionalGeneration>(T5Config::from_config(c), o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
