// KV caches for incremental decoding: the interface the decoders' attention writes
// through, and the growing eager cache (KVCache, transformers' DynamicCache). The
// fixed-size cache that is updated in place is StaticCache (static_cache.h).
//
// One decoder forward over `q` new tokens uses a cache in this order:
//   1. new_positions(q) and key_length(q), before any layer runs: the absolute positions
//      of the new tokens (= the slots they go to) and how many key slots attention sees;
//   2. update(layer, k, v) once per layer, in layer order: stores this step's k, v and
//      returns the keys and values to attend over. The cache advances after the last
//      layer, so every layer of one forward writes the same slots.
// Callers pass nothing else: where tokens go is the cache's own state.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::nn {

// What a model's cache holds per layer (models report it; caches are built from it).
struct CacheSpec {
  int64_t num_layers = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  DType dtype = DType::F32;  // the dtype of k and v (the model's compute dtype)
};

// A cache's tensors by name, in a fixed order: "key_cache.0", "value_cache.0", ...,
// then any state ("cache_position"). What pytree flattening of a cache yields.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Cache {
 public:
  virtual ~Cache() = default;

  // Absolute positions of the `new_tokens` tokens of this forward: int64 [new_tokens].
  // They are the key slots the tokens are written to, and what a causal mask compares
  // key slots with.
  virtual Tensor new_positions(const SymInt& new_tokens) const = 0;
  // Number of key slots attention sees once this forward's tokens are stored: cached +
  // new (KVCache) or max_cache_len (StaticCache). Slot j always holds position j.
  virtual SymInt key_length(const SymInt& new_tokens) const = 0;
  // Stores k, v [batch, kv_heads, new_tokens, head_dim] of `layer` and returns the keys
  // and values to attend over, [batch, kv_heads, key_length, head_dim].
  virtual std::pair<Tensor, Tensor> update(size_t layer, const Tensor& k, const Tensor& v) = 0;

  // Tokens stored so far (eager: StaticCache reads its position buffer).
  virtual int64_t seq_length() const = 0;
  // The most tokens it can hold; nullopt when it grows without bound.
  virtual std::optional<int64_t> max_cache_len() const = 0;
  // Empties the cache (StaticCache keeps its buffers and rewinds its position).
  virtual void reset() = 0;
  // Throws ValueError when the cache cannot serve a model with this spec (layer count,
  // heads, head size, dtype), naming what differs.
  virtual void check_compatible(const CacheSpec& spec) const = 0;
  // Its tensors by name (aliases, no copy).
  virtual NamedTensors named_tensors() const = 0;
};

// Growing per-layer K/V for eager decoding: [batch, kv_heads, seq, head_dim], extended
// by concatenation at every step.
class KVCache : public Cache {
 public:
  KVCache() = default;
  // Over existing per-layer keys and values (same count; each [b, h, seq, d] with one seq
  // for all layers), e.g. a cache rebuilt from its named_tensors().
  KVCache(std::vector<Tensor> keys, std::vector<Tensor> values);

  Tensor new_positions(const SymInt& new_tokens) const override;
  SymInt key_length(const SymInt& new_tokens) const override;
  std::pair<Tensor, Tensor> update(size_t layer, const Tensor& k, const Tensor& v) override;
  int64_t seq_length() const override { return past().expect_int(); }
  std::optional<int64_t> max_cache_len() const override { return std::nullopt; }
  void reset() override { layers_.clear(); }
  void clear() { reset(); }
  void check_compatible(const CacheSpec& spec) const override;
  NamedTensors named_tensors() const override;

 private:
  // Tokens cached before this forward (symbolic when the cached tensors are traced).
  SymInt past() const;
  std::vector<std::pair<Tensor, Tensor>> layers_;
};

using DynamicCache = KVCache;

}  // namespace ingot::nn
