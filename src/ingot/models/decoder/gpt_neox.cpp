// GPTNeoXForCausalLM (Pythia, ...): LayerNorm blocks with a parallel residual by default
// (out = x + attn(ln1(x)) + mlp(ln2(x)); sequential when use_parallel_residual is false),
// partial rotary, and a fused qkv projection interleaved per head: its output viewed as
// [b, s, heads, 3 * head_dim] holds each head's q, k, v in turn. Plain GELU MLP, untied
// LM head. Names: gpt_neox.embed_in, .layers.N.{input_layernorm, post_attention_layernorm,
// attention.{query_key_value, dense}, mlp.{dense_h_to_4h, dense_4h_to_h}},
// .final_layer_norm, embed_out (the LM head: transformers names it lm_head in memory but
// saves it as embed_out).
#include "ingot/models/model.h"
#include "ingot/nn/rotary.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

struct NeoXConfig {
  int64_t vocab_size, hidden, layers, heads, intermediate, max_positions;
  double eps;
  std::string act;
  bool parallel_residual, attention_bias, tied;
  RopeConfig rope;
  int64_t head_dim() const { return hidden / heads; }
};

class NeoXLayer : public nn::Module {
 public:
  NeoXLayer(const NeoXConfig& c, size_t index, DType dtype)
      : nn::Module("GPTNeoXLayer"), c_(c), index_(index) {
    input_layernorm_ = register_module(
        "input_layernorm", std::make_shared<nn::LayerNorm>(c.hidden, c.eps, true, dtype));
    post_attention_layernorm_ = register_module(
        "post_attention_layernorm", std::make_shared<nn::LayerNorm>(c.hidden, c.eps, true, dtype));
    auto attn = register_module("attention", std::make_shared<nn::Container>("GPTNeoXAttention"));
    qkv_ = attn->add("query_key_value",
                     std::make_shared<nn::Linear>(c.hidden, 3 * c.hidden, c.attention_bias, dtype));
    dense_ = attn->add("dense",
                       std::make_shared<nn::Linear>(c.hidden, c.hidden, c.attention_bias, dtype));
    auto mlp = register_module("mlp", std::make_shared<nn::Container>("GPTNeoXMLP"));
    up_ = mlp->add("dense_h_to_4h",
                   std::make_shared<nn::Linear>(c.hidden, c.intermediate, true, dtype));
    down_ = mlp->add("dense_4h_to_h",
                     std::make_shared<nn::Linear>(c.intermediate, c.hidden, true, dtype));
  }

  // x [b, s, hidden]
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 nn::Cache* cache) const {
    Tensor a = attention(input_layernorm_->forward(x), cos, sin, mask, cache);
    if (c_.parallel_residual) return add(add(x, a), mlp(post_attention_layernorm_->forward(x)));
    Tensor h = add(x, a);
    return add(h, mlp(post_attention_layernorm_->forward(h)));
  }

 private:
  Tensor mlp(const Tensor& x) const {
    return down_->forward(nn::activation(c_.act, up_->forward(x)));
  }

  Tensor attention(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                   nn::Cache* cache) const {
    const SymInt b = x.sym_size(0), s = x.sym_size(1);
    const int64_t hd = c_.head_dim();
    // [b, s, 3 hidden] -> [b, heads, s, 3 hd] -> q, k, v [b, heads, s, hd]
    Tensor qkv = transpose(view(qkv_->forward(x), {b, s, SymInt(c_.heads), SymInt(3 * hd)}), 1, 2);
    auto parts = split(qkv, hd, -1);
    auto [q, k] = nn::apply_rotary(parts[0], parts[1], cos, sin);
    Tensor v = parts[2];
    if (cache) std::tie(k, v) = cache->update(index_, k, v);
    Tensor out = scaled_dot_product_attention(q, k, v, mask, false, 1.0 / std::sqrt(double(hd)));
    return dense_->forward(reshape(transpose(out, 1, 2), {b, s, SymInt(c_.hidden)}));
  }

  NeoXConfig c_;
  size_t index_;
  std::shared_ptr<nn::LayerNorm> input_layernorm_, post_attention_layernorm_;
  std::shared_ptr<nn::Linear> qkv_, dense_, up_, down_;
};

class GPTNeoXForCausalLM : public PretrainedModel {
 public:
  GPTNeoXForCausalLM(const NeoXConfig& c, DType dtype)
      : PretrainedModel("GPTNeoXForCausalLM"), c_(c) {
    auto body = register_module("gpt_neox", std::make_shared<nn::Container>("GPTNeoXModel"));
    embed_in_ =
        body->add("embed_in", std::make_shared<nn::Embedding>(c.vocab_size, c.hidden, dtype));
    layers_ = body->add("layers", std::make_shared<nn::ModuleList>());
    for (int64_t i = 0; i < c.layers; ++i)
      layers_->append(std::make_shared<NeoXLayer>(c, size_t(i), dtype));
    final_layer_norm_ = body->add("final_layer_norm",
                                  std::make_shared<nn::LayerNorm>(c.hidden, c.eps, true, dtype));
    rotary_ = body->add(
        "rotary_emb", std::make_shared<nn::RotaryEmbedding>(c.head_dim(), c.rope, c.max_positions));
    if (!c.tied)
      lm_head_ = register_module(
          "embed_out", std::make_shared<nn::Linear>(c.hidden, c.vocab_size, false, dtype));
  }

  std::vector<std::string> input_names() const override {
    return {"input_ids", "attention_mask", "position_ids"};
  }
  std::optional<nn::CacheSpec> cache_spec() const override {
    return nn::CacheSpec{c_.layers, c_.heads, c_.head_dim(), embed_in_->weight().dtype()};
  }

  // Trace-friendly: batch and seq are only used as SymInts, positions and masks are ops.
  ModelOutputs forward(const ModelInputs& in) override {
    check_input_ids(in, architecture());
    if (in.cache) in.cache->check_compatible(*cache_spec());
    const SymInt batch = in.input_ids.sym_size(0), seq = in.input_ids.sym_size(1);
    Tensor positions = in.cache ? in.cache->new_positions(seq) : arange_symint(seq);  // [s]
    const SymInt key_length = in.cache ? in.cache->key_length(seq) : seq;
    Tensor position_ids =
        in.position_ids.defined() ? in.position_ids : default_position_ids(positions, batch);
    Tensor x = embed_in_->forward(in.input_ids);  // [b, s, hidden]
    auto [cos, sin] = rotary_->forward(position_ids, x.dtype());
    Tensor mask = nn::causal_mask(positions, key_length, in.attention_mask, std::nullopt);
    ModelOutputs out;
    if (in.output_hidden_states) out.hidden_states.push_back(x);
    for (size_t i = 0; i < layers_->size(); ++i) {
      x = layers_->at<NeoXLayer>(i).forward(x, cos, sin, mask, in.cache);
      if (in.output_hidden_states && i + 1 < layers_->size()) out.hidden_states.push_back(x);
    }
    x = final_layer_norm_->forward(x);
    if (in.output_hidden_states) out.hidden_states.push_back(x);
    out.last_hidden_state = x;
    out.logits = linear(x, lm_head_ ? lm_head_->weight() : embed_in_->weight());
    return out;
  }

 private:
  NeoXConfig c_;
  std::shared_ptr<nn::Embedding> embed_in_;
  std::shared_ptr<nn::ModuleList> layers_;
  std::shared_ptr<nn::LayerNorm> final_layer_norm_;
  std::shared_ptr<nn::RotaryEmbedding> rotary_;
  std::shared_ptr<nn::Linear> lm_head_;
};

const ArchitectureRegistrar kGPTNeoX("GPTNeoXForCausalLM", [](const ConfigReader& c,
                                                              const LoadOptions& o) {
  NeoXConfig n;
  n.vocab_size = c.get_int("vocab_size");
  n.hidden = c.get_int("hidden_size");
  n.layers = c.get_int("num_hidden_layers");
  n.heads = c.get_int("num_attention_heads");
  n.intermediate = c.get_int("intermediate_size", 4 * n.hidden);
  n.max_positions = c.get_int("max_position_embeddings", 2048);
  n.eps = c.get_double("layer_norm_eps", 1e-5);
  n.act = c.get_string("hidden_act", "gelu");
  n.parallel_residual = c.get_bool("use_parallel_residual", true);
  n.attention_bias = c.get_bool("attention_bias", true);
  n.tied = c.get_bool("tie_word_embeddings", false);
  n.rope = c.rope();
  if (c.has("rotary_pct") && !c.has("rope_parameters"))
    n.rope.partial_rotary_factor = c.get_double("rotary_pct");
  if (c.has("rotary_emb_base") && !c.has("rope_parameters"))
    n.rope.theta = c.get_double("rotary_emb_base");
  nn::check_activation(n.act);
  INGOT_CHECK(n.heads > 0 && n.hidden % n.heads == 0, IoError,
              "[config] '{}': hidden_size {} is not a multiple of num_attention_heads {}",
              c.origin(), n.hidden, n.heads);
  return std::make_shared<GPTNeoXForCausalLM>(n, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
