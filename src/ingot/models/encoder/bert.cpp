// BertModel: token + absolute position + token-type embeddings with LayerNorm,
// post-LayerNorm encoder blocks with bidirectional (padding-only) attention, and the
// tanh pooler over the first token. Names: embeddings.{word,position,token_type}_
// embeddings, embeddings.LayerNorm, encoder.layer.N.{attention.self.{query,key,value},
// attention.output.{dense,LayerNorm}, intermediate.dense, output.{dense,LayerNorm}},
// pooler.dense.
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

struct BertConfig {
  int64_t vocab_size, hidden, layers, heads, intermediate, max_positions, type_vocab_size;
  double eps;
  std::string act;
};

class BertLayer : public nn::Module {
 public:
  BertLayer(const BertConfig& c, DType dtype) : nn::Module("BertLayer"), c_(c) {
    auto attention = register_module("attention", std::make_shared<nn::Container>("BertAttention"));
    auto self = attention->add("self", std::make_shared<nn::Container>("BertSelfAttention"));
    query_ = self->add("query", std::make_shared<nn::Linear>(c.hidden, c.hidden, true, dtype));
    key_ = self->add("key", std::make_shared<nn::Linear>(c.hidden, c.hidden, true, dtype));
    value_ = self->add("value", std::make_shared<nn::Linear>(c.hidden, c.hidden, true, dtype));
    auto attn_out = attention->add("output", std::make_shared<nn::Container>("BertSelfOutput"));
    attn_dense_ =
        attn_out->add("dense", std::make_shared<nn::Linear>(c.hidden, c.hidden, true, dtype));
    attn_norm_ =
        attn_out->add("LayerNorm", std::make_shared<nn::LayerNorm>(c.hidden, c.eps, true, dtype));
    auto inter =
        register_module("intermediate", std::make_shared<nn::Container>("BertIntermediate"));
    inter_dense_ =
        inter->add("dense", std::make_shared<nn::Linear>(c.hidden, c.intermediate, true, dtype));
    auto output = register_module("output", std::make_shared<nn::Container>("BertOutput"));
    out_dense_ =
        output->add("dense", std::make_shared<nn::Linear>(c.intermediate, c.hidden, true, dtype));
    out_norm_ =
        output->add("LayerNorm", std::make_shared<nn::LayerNorm>(c.hidden, c.eps, true, dtype));
  }

  // x [b, s, hidden]; mask [b, 1, 1, s] or undefined
  Tensor forward(const Tensor& x, const Tensor& mask) const {
    const SymInt b = x.sym_size(0), s = x.sym_size(1);
    const int64_t hd = c_.hidden / c_.heads;
    auto heads = [&](const Tensor& t) {  // -> [b, heads, s, hd]
      return transpose(view(t, {b, s, SymInt(c_.heads), SymInt(hd)}), 1, 2);
    };
    Tensor a = scaled_dot_product_attention(
        heads(query_->forward(x)), heads(key_->forward(x)), heads(value_->forward(x)),
        mask.defined() ? std::optional<Tensor>(mask) : std::nullopt, false,
        1.0 / std::sqrt(double(hd)));
    a = reshape(transpose(a, 1, 2), {b, s, SymInt(c_.hidden)});
    Tensor h = attn_norm_->forward(add(attn_dense_->forward(a), x));
    Tensor m = out_dense_->forward(nn::activation(c_.act, inter_dense_->forward(h)));
    return out_norm_->forward(add(m, h));
  }

 private:
  BertConfig c_;
  std::shared_ptr<nn::Linear> query_, key_, value_, attn_dense_, inter_dense_, out_dense_;
  std::shared_ptr<nn::LayerNorm> attn_norm_, out_norm_;
};

class BertModel : public PretrainedModel {
 public:
  BertModel(const BertConfig& c, DType dtype) : PretrainedModel("BertModel"), c_(c) {
    auto emb = register_module("embeddings", std::make_shared<nn::Container>("BertEmbeddings"));
    word_ =
        emb->add("word_embeddings", std::make_shared<nn::Embedding>(c.vocab_size, c.hidden, dtype));
    position_ = emb->add("position_embeddings",
                         std::make_shared<nn::Embedding>(c.max_positions, c.hidden, dtype));
    token_type_ = emb->add("token_type_embeddings",
                           std::make_shared<nn::Embedding>(c.type_vocab_size, c.hidden, dtype));
    emb_norm_ =
        emb->add("LayerNorm", std::make_shared<nn::LayerNorm>(c.hidden, c.eps, true, dtype));
    auto encoder = register_module("encoder", std::make_shared<nn::Container>("BertEncoder"));
    layers_ = encoder->add("layer", std::make_shared<nn::ModuleList>());
    for (int64_t i = 0; i < c.layers; ++i) layers_->append(std::make_shared<BertLayer>(c, dtype));
    auto pooler = register_module("pooler", std::make_shared<nn::Container>("BertPooler"));
    pooler_ = pooler->add("dense", std::make_shared<nn::Linear>(c.hidden, c.hidden, true, dtype));
  }

  std::vector<std::string> input_names() const override {
    return {"input_ids", "attention_mask", "token_type_ids", "position_ids"};
  }

  ModelOutputs forward(const ModelInputs& in) override {
    check_input_ids(in, architecture());
    const SymInt batch = in.input_ids.sym_size(0), seq = in.input_ids.sym_size(1);
    INGOT_CHECK(bool(seq <= SymInt(c_.max_positions)), ValueError,
                "[BertModel] sequence length {} exceeds max_position_embeddings {}", seq.str(),
                c_.max_positions);
    Tensor pos = in.position_ids.defined() ? in.position_ids : default_position_ids(batch, seq, 0);
    Tensor types =
        in.token_type_ids.defined() ? in.token_type_ids : zeros_symint({batch, seq}, DType::I64);
    Tensor x = add(add(word_->forward(in.input_ids), token_type_->forward(types)),
                   position_->forward(pos));
    x = emb_norm_->forward(x);  // [b, s, hidden]
    Tensor mask = in.attention_mask.defined() ? nn::padding_mask(in.attention_mask) : Tensor();
    ModelOutputs out;
    if (in.output_hidden_states) out.hidden_states.push_back(x);
    for (size_t i = 0; i < layers_->size(); ++i) {
      x = layers_->at<BertLayer>(i).forward(x, mask);
      if (in.output_hidden_states) out.hidden_states.push_back(x);
    }
    out.last_hidden_state = x;
    out.pooler_output = tanh(pooler_->forward(select(x, 1, 0)));  // [b, hidden]
    return out;
  }

 private:
  BertConfig c_;
  std::shared_ptr<nn::Embedding> word_, position_, token_type_;
  std::shared_ptr<nn::LayerNorm> emb_norm_;
  std::shared_ptr<nn::ModuleList> layers_;
  std::shared_ptr<nn::Linear> pooler_;
};

const ArchitectureRegistrar kBert("BertModel", [](const ConfigReader& c, const LoadOptions& o) {
  BertConfig b;
  b.vocab_size = c.get_int("vocab_size");
  b.hidden = c.get_int("hidden_size");
  b.layers = c.get_int("num_hidden_layers");
  b.heads = c.get_int("num_attention_heads");
  b.intermediate = c.get_int("intermediate_size");
  b.max_positions = c.get_int("max_position_embeddings", 512);
  b.type_vocab_size = c.get_int("type_vocab_size", 2);
  b.eps = c.get_double("layer_norm_eps", 1e-12);
  b.act = c.get_string("hidden_act", "gelu");
  nn::check_activation(b.act);
  const std::string pos_type = c.get_string("position_embedding_type", "absolute");
  INGOT_CHECK(pos_type == "absolute", NotSupportedError,
              "[BertModel] '{}': position_embedding_type '{}' is not supported (only 'absolute')",
              c.origin(), pos_type);
  INGOT_CHECK(b.hidden % b.heads == 0, IoError,
              "[config] '{}': hidden_size {} is not a multiple of "
              "num_attention_heads {}",
              c.origin(), b.hidden, b.heads);
  return std::make_shared<BertModel>(b, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
