#include "ingot/tune/export_attention.h"

#include "ingot/export/control_flow.h"
#include "ingot/ops/functional.h"

namespace ingot::tune {
namespace {

std::shared_ptr<ExportKVCache> as_export_cache(const std::shared_ptr<KVCache>& cache) {
  if (!cache) return nullptr;
  auto c = std::dynamic_pointer_cast<ExportKVCache>(cache);
  INGOT_CHECK(c != nullptr && !c->transpose_cache(), ValueError,
              "[ExportMultiHeadAttention] kv_cache must be an ExportKVCache with transpose_cache "
              "= false (layout [b, s, n_kv, h_d]), got {}{}; leave it unset and call "
              "setup_cache()",
              cache->type_name(), c ? " with transpose_cache = true" : "");
  return c;
}

}  // namespace

ExportMultiHeadAttention::ExportMultiHeadAttention(MultiHeadAttentionArgs args)
    : nn::Module("ExportMultiHeadAttention"), args_(std::move(args)) {
  validate_attention_args(args_, type_name());
  kv_cache_ = as_export_cache(args_.kv_cache);
  register_module("q_proj", args_.q_proj);
  register_module("k_proj", args_.k_proj);
  register_module("v_proj", args_.v_proj);
  register_module("output_proj", args_.output_proj);
  if (args_.pos_embeddings) register_module("pos_embeddings", args_.pos_embeddings);
  if (args_.q_norm) {
    register_module("q_norm", args_.q_norm);
    register_module("k_norm", args_.k_norm);
  }
  if (kv_cache_) register_module("kv_cache", kv_cache_);
  register_module("_sdpa",
                  std::make_shared<SDPA>(args_.num_kv_heads, args_.num_heads, args_.head_dim,
                                         args_.num_heads / args_.num_kv_heads,
                                         is_training() ? args_.attn_dropout : 0.0, args_.is_causal,
                                         kv_cache_ != nullptr));
}

std::shared_ptr<SDPA> ExportMultiHeadAttention::sdpa() const {
  auto s = std::dynamic_pointer_cast<SDPA>(child("_sdpa"));
  INGOT_CHECK(s != nullptr, ValueError,
              "[ExportMultiHeadAttention] child '_sdpa' must be an SDPA (or a subclass)");
  return s;
}

void ExportMultiHeadAttention::set_sdpa(std::shared_ptr<SDPA> sdpa) {
  INGOT_CHECK(sdpa != nullptr, ValueError, "[ExportMultiHeadAttention.set_sdpa] sdpa is null");
  sdpa->set_has_kv_cache(kv_cache_ != nullptr);
  replace_child("_sdpa", std::move(sdpa));
}

bool ExportMultiHeadAttention::setup_cache(int64_t batch_size, DType dtype, int64_t max_seq_len) {
  if (kv_cache_) {
    fmt::print(stderr,
               "[ExportMultiHeadAttention.setup_cache] warning: Key value caches are already "
               "setup. You cannot call setup_cache() twice. Skipping.\n");
    return false;
  }
  kv_cache_ = std::make_shared<ExportKVCache>(batch_size, max_seq_len, args_.num_kv_heads,
                                              args_.head_dim, dtype, /*transpose_cache=*/false);
  args_.kv_cache = kv_cache_;
  register_module("kv_cache", kv_cache_);
  sdpa()->set_has_kv_cache(true);
  cache_enabled_ = true;
  return true;
}

void ExportMultiHeadAttention::reset_cache() {
  INGOT_CHECK(kv_cache_ != nullptr, ValueError,
              "[ExportMultiHeadAttention.reset_cache] Key value caches are not setup. Call "
              "setup_cache() first.");
  kv_cache_->reset();
}

std::pair<Tensor, Tensor> ExportMultiHeadAttention::calculate_kv(const Tensor& y, const SymInt& b,
                                                                 const Tensor& input_pos) const {
  const SymInt s_y = y.sym_size(1);
  // Explicit sizes (torchtune writes -1): inferring the head count from a symbolic
  // element count would cost a guard.
  const SymIntList shape{b, s_y, SymInt(args_.num_kv_heads), SymInt(args_.head_dim)};
  Tensor k = view(args_.k_proj->forward(y), shape);  // [b, s_y, n_kv, h_d]
  Tensor v = view(args_.v_proj->forward(y), shape);
  if (args_.pos_embeddings) k = args_.pos_embeddings->forward(k, input_pos);
  if (args_.k_norm) k = args_.k_norm->forward(k);
  return {k, v};
}

Tensor ExportMultiHeadAttention::forward(const Tensor& x, const Tensor& y, const Tensor& mask,
                                         const Tensor& input_pos) const {
  const SymInt b = x.sym_size(0), s_x = x.sym_size(1);
  const int64_t q_per_kv = args_.num_heads / args_.num_kv_heads;
  Tensor q = view(args_.q_proj->forward(x),
                  {b, s_x, SymInt(args_.num_kv_heads * q_per_kv), SymInt(args_.head_dim)});
  if (args_.pos_embeddings) q = args_.pos_embeddings->forward(q, input_pos);
  if (args_.q_norm) q = args_.q_norm->forward(q);  // [b, s_x, n_h, h_d]

  Tensor k, v;  // [b, s_kv, n_kv, h_d]
  if (!y.defined()) {
    INGOT_CHECK(kv_cache_ != nullptr, ValueError,
                "[ExportMultiHeadAttention] Must provide y input or use kv_cache to enable "
                "streaming decoding");
    k = kv_cache_->k_cache();
    v = kv_cache_->v_cache();
  } else if (!kv_cache_ || !cache_enabled_) {
    std::tie(k, v) = calculate_kv(y, b, input_pos);
  } else {
    // Operands: y, then input_pos when given (the rotary positions of the new keys).
    TensorList operands{y};
    if (input_pos.defined()) operands.push_back(input_pos);
    auto read_cache = [this](const TensorList&) {
      std::shared_ptr<ExportKVCache> c = kv_cache_->clone();
      return TensorList{c->k_cache(), c->v_cache(), c->cache_pos()};
    };
    auto write_cache = [this, b](const TensorList& in) {
      auto [nk, nv] = calculate_kv(in[0], b, in.size() > 1 ? in[1] : Tensor());
      std::shared_ptr<ExportKVCache> c = kv_cache_->clone();
      c->update(nk, nv);
      return TensorList{c->k_cache(), c->v_cache(), c->cache_pos()};
    };
    TensorList out = cond(all(isnan(y)), read_cache, write_cache, operands);
    copy_(kv_cache_->k_cache(), out[0]);
    copy_(kv_cache_->v_cache(), out[1]);
    copy_(kv_cache_->cache_pos(), out[2]);
    k = out[0];
    v = out[1];
  }
  return args_.output_proj->forward(sdpa()->forward(q, k, v, b, s_x, mask));
}

int replace_mha_with_inference_mha(nn::Module& module) {
  return module.replace_modules(
      "MultiHeadAttention",
      [](const std::string& fqn, nn::Module& m) -> std::shared_ptr<nn::Module> {
        auto* found = dynamic_cast<MultiHeadAttention*>(&m);
        if (found == nullptr) return nullptr;  // another class with the same type name
        const MultiHeadAttention& ref = *found;
        INGOT_CHECK(ref.kv_cache() == nullptr, ValueError,
                    "[replace_mha_with_inference_mha] '{}' already has a KV cache; replace "
                    "before setup_cache() (the export-friendly attention keeps its own cache "
                    "in the [b, s, n_kv, h_d] layout)",
                    fqn);
        auto replacement = std::make_shared<ExportMultiHeadAttention>(ref.args());
        replacement->set_cache_enabled(ref.cache_enabled());
        replacement->train(ref.is_training());
        return replacement;
      });
}

}  // namespace ingot::tune
