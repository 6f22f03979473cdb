#include "ingot/nn/cache.h"

#include "ingot/ops/functional.h"

namespace ingot::nn {

KVCache::KVCache(std::vector<Tensor> keys, std::vector<Tensor> values) {
  INGOT_CHECK(keys.size() == values.size(), ValueError,
              "[KVCache] {} key tensors but {} value tensors; give one of each per layer",
              keys.size(), values.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const Tensor& k = keys[i];
    const Tensor& v = values[i];
    INGOT_CHECK(k.defined() && v.defined() && k.dim() == 4 && v.dim() == 4, ShapeError,
                "[KVCache] layer {}: key and value must be [batch, kv_heads, seq, head_dim], got "
                "{} and {}",
                i, k.defined() ? k.shape_string() : "nothing",
                v.defined() ? v.shape_string() : "nothing");
    layers_.emplace_back(k, v);
  }
}

SymInt KVCache::past() const {
  return layers_.empty() || !layers_[0].first.defined() ? SymInt(0) : layers_[0].first.sym_size(2);
}

Tensor KVCache::new_positions(const SymInt& new_tokens) const {
  const SymInt p = past();
  return arange_symint(p, p + new_tokens);  // [new_tokens]
}

SymInt KVCache::key_length(const SymInt& new_tokens) const {
  return past() + new_tokens;
}

std::pair<Tensor, Tensor> KVCache::update(size_t layer, const Tensor& k, const Tensor& v) {
  if (layers_.size() <= layer) layers_.resize(layer + 1);
  auto& [ck, cv] = layers_[layer];
  if (!ck.defined()) {
    ck = k;
    cv = v;
  } else {
    ck = cat({ck, k}, 2);  // [b, h, past + new, d]
    cv = cat({cv, v}, 2);
  }
  return {ck, cv};
}

void KVCache::check_compatible(const CacheSpec& spec) const {
  INGOT_CHECK(int64_t(layers_.size()) <= spec.num_layers, ValueError,
              "[KVCache] holds {} layers but the model has {}", layers_.size(), spec.num_layers);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Tensor& k = layers_[i].first;
    if (!k.defined()) continue;
    const bool heads_ok = !(k.sym_size(1) != spec.num_kv_heads).maybe_bool().value_or(false);
    const bool dim_ok = !(k.sym_size(3) != spec.head_dim).maybe_bool().value_or(false);
    INGOT_CHECK(heads_ok && dim_ok && k.dtype() == spec.dtype, ValueError,
                "[KVCache] layer {} holds {} keys of shape {}; the model needs {} kv heads of size "
                "{} in {}",
                i, k.dtype(), k.shape_string(), spec.num_kv_heads, spec.head_dim, spec.dtype);
  }
}

NamedTensors KVCache::named_tensors() const {
  NamedTensors out;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!layers_[i].first.defined()) continue;
    out.emplace_back("key_cache." + std::to_string(i), layers_[i].first);
    out.emplace_back("value_cache." + std::to_string(i), layers_[i].second);
  }
  return out;
}

}  // namespace ingot::nn
