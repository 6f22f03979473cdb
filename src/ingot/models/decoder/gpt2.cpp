// GPT2LMHeadModel: learned absolute positions, pre-LayerNorm blocks, fused qkv
// projection stored as a transformers Conv1D (weight [in, out], so y = x W + b), GELU
// (tanh) MLP, LM head tied to the token embedding. Names: transformer.wte, .wpe,
// .h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, .ln_f.
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

struct Gpt2Config {
  int64_t vocab_size, n_embd, n_layer, n_head, n_positions, n_inner;
  double eps;
  std::string act;
  bool scale_attn_weights, scale_by_inverse_layer_idx;
};

// transformers' Conv1D: weight [in, out], bias [out].
class Conv1D : public nn::Module {
 public:
  Conv1D(int64_t in, int64_t out, DType dtype) : nn::Module("Conv1D") {
    weight_ = register_parameter("weight", nn::placeholder({in, out}, dtype));
    bias_ = register_parameter("bias", nn::placeholder({out}, dtype));
  }
  Tensor forward(const Tensor& x) const { return linear(x, transpose(*weight_, 0, 1), *bias_); }

 private:
  Tensor* weight_;
  Tensor* bias_;
};

class Gpt2Block : public nn::Module {
 public:
  Gpt2Block(const Gpt2Config& c, size_t index, DType dtype)
      : nn::Module("GPT2Block"), c_(c), index_(index) {
    ln_1_ = register_module("ln_1", std::make_shared<nn::LayerNorm>(c.n_embd, c.eps, true, dtype));
    auto attn = register_module("attn", std::make_shared<nn::Container>("GPT2Attention"));
    c_attn_ = attn->add("c_attn", std::make_shared<Conv1D>(c.n_embd, 3 * c.n_embd, dtype));
    c_proj_ = attn->add("c_proj", std::make_shared<Conv1D>(c.n_embd, c.n_embd, dtype));
    ln_2_ = register_module("ln_2", std::make_shared<nn::LayerNorm>(c.n_embd, c.eps, true, dtype));
    auto mlp = register_module("mlp", std::make_shared<nn::Container>("GPT2MLP"));
    c_fc_ = mlp->add("c_fc", std::make_shared<Conv1D>(c.n_embd, c.n_inner, dtype));
    mlp_proj_ = mlp->add("c_proj", std::make_shared<Conv1D>(c.n_inner, c.n_embd, dtype));
  }

  // x [b, s, n_embd]
  Tensor forward(const Tensor& x, const Tensor& mask, nn::Cache* cache) const {
    const SymInt b = x.sym_size(0), s = x.sym_size(1);
    const int64_t hd = c_.n_embd / c_.n_head;
    auto qkv = split(c_attn_->forward(ln_1_->forward(x)), c_.n_embd, 2);  // 3 x [b, s, n_embd]
    auto heads = [&](const Tensor& t) {                                   // -> [b, heads, s, hd]
      return transpose(view(t, {b, s, SymInt(c_.n_head), SymInt(hd)}), 1, 2);
    };
    Tensor q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
    if (cache) std::tie(k, v) = cache->update(index_, k, v);
    double scale = c_.scale_attn_weights ? 1.0 / std::sqrt(double(hd)) : 1.0;
    if (c_.scale_by_inverse_layer_idx) scale /= double(index_ + 1);
    Tensor a = scaled_dot_product_attention(q, k, v, mask, false, scale);
    a = reshape(transpose(a, 1, 2), {b, s, SymInt(c_.n_embd)});  // [b, s, n_embd]
    Tensor h = add(x, c_proj_->forward(a));
    Tensor m = mlp_proj_->forward(nn::activation(c_.act, c_fc_->forward(ln_2_->forward(h))));
    return add(h, m);
  }

 private:
  Gpt2Config c_;
  size_t index_;
  std::shared_ptr<nn::LayerNorm> ln_1_, ln_2_;
  std::shared_ptr<Conv1D> c_attn_, c_proj_, c_fc_, mlp_proj_;
};

class Gpt2LMHeadModel : public PretrainedModel {
 public:
  Gpt2LMHeadModel(const Gpt2Config& c, DType dtype) : PretrainedModel("GPT2LMHeadModel"), c_(c) {
    auto t = register_module("transformer", std::make_shared<nn::Container>("GPT2Model"));
    wte_ = t->add("wte", std::make_shared<nn::Embedding>(c.vocab_size, c.n_embd, dtype));
    wpe_ = t->add("wpe", std::make_shared<nn::Embedding>(c.n_positions, c.n_embd, dtype));
    h_ = t->add("h", std::make_shared<nn::ModuleList>());
    for (int64_t i = 0; i < c.n_layer; ++i)
      h_->append(std::make_shared<Gpt2Block>(c, size_t(i), dtype));
    ln_f_ = t->add("ln_f", std::make_shared<nn::LayerNorm>(c.n_embd, c.eps, true, dtype));
  }

  std::vector<std::string> input_names() const override {
    return {"input_ids", "attention_mask", "position_ids"};
  }

  std::optional<nn::CacheSpec> cache_spec() const override {
    return nn::CacheSpec{c_.n_layer, c_.n_head, c_.n_embd / c_.n_head, wte_->weight().dtype()};
  }

  // Trace-friendly: batch and seq are only used as SymInts, positions and masks are ops.
  ModelOutputs forward(const ModelInputs& in) override {
    check_input_ids(in, architecture());
    if (in.cache) in.cache->check_compatible(*cache_spec());
    const SymInt batch = in.input_ids.sym_size(0), seq = in.input_ids.sym_size(1);
    Tensor positions = in.cache ? in.cache->new_positions(seq) : arange_symint(seq);  // [s]
    const SymInt key_length = in.cache ? in.cache->key_length(seq) : seq;
    Tensor pos =
        in.position_ids.defined() ? in.position_ids : default_position_ids(positions, batch);
    if (pos.has_storage() && pos.numel() > 0) {  // eager: a clear error before wpe's lookup
      const int64_t last = amax(pos).item<int64_t>();
      INGOT_CHECK(last < c_.n_positions, ValueError,
                  "[GPT2LMHeadModel] position {} is beyond the model's n_positions {}", last,
                  c_.n_positions);
    }
    Tensor x = add(wte_->forward(in.input_ids), wpe_->forward(pos));  // [b, s, n_embd]
    Tensor mask = nn::causal_mask(positions, key_length, in.attention_mask, std::nullopt);
    ModelOutputs out;
    if (in.output_hidden_states) out.hidden_states.push_back(x);
    for (size_t i = 0; i < h_->size(); ++i) {
      x = h_->at<Gpt2Block>(i).forward(x, mask, in.cache);
      if (in.output_hidden_states && i + 1 < h_->size()) out.hidden_states.push_back(x);
    }
    x = ln_f_->forward(x);
    if (in.output_hidden_states) out.hidden_states.push_back(x);
    out.last_hidden_state = x;
    out.logits = linear(x, wte_->weight());  // tied LM head
    return out;
  }

 private:
  Gpt2Config c_;
  std::shared_ptr<nn::Embedding> wte_, wpe_;
  std::shared_ptr<nn::ModuleList> h_;
  std::shared_ptr<nn::LayerNorm> ln_f_;
};

const ArchitectureRegistrar kGpt2("GPT2LMHeadModel", [](const ConfigReader& c,
                                                        const LoadOptions& o) {
  Gpt2Config g;
  g.vocab_size = c.get_int("vocab_size");
  g.n_embd = c.get_int("n_embd");
  g.n_layer = c.get_int("n_layer");
  g.n_head = c.get_int("n_head");
  g.n_positions = c.get_int("n_positions");
  g.n_inner = c.get_int("n_inner", 4 * g.n_embd);
  g.eps = c.get_double("layer_norm_epsilon", 1e-5);
  g.act = c.get_string("activation_function", "gelu_new");
  g.scale_attn_weights = c.get_bool("scale_attn_weights", true);
  g.scale_by_inverse_layer_idx = c.get_bool("scale_attn_by_inverse_layer_idx", false);
  nn::check_activation(g.act);
  INGOT_CHECK(g.n_embd % g.n_head == 0, IoError,
              "[config] '{}': n_embd {} is not a multiple of n_head {}", c.origin(), g.n_embd,
              g.n_head);
  INGOT_CHECK(c.get_bool("tie_word_embeddings", true), NotSupportedError,
              "[GPT2LMHeadModel] '{}': untied lm_head is not supported", c.origin());
  return std::make_shared<Gpt2LMHeadModel>(g, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
