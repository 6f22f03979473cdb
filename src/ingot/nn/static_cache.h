// StaticCache: a fixed-size KV cache allocated once and written in place (transformers'
// StaticCache; what exported decode graphs take and mutate).
//
// State, all tensors (so a traced program sees them as inputs, and its writes to them as
// user-input mutations):
//   key_cache.N, value_cache.N  [max_batch, kv_heads, max_cache_len, head_dim] per layer
//   cache_position              int64, 0-d: slots [0, cache_position) hold tokens
// A forward over q new tokens writes them to slots cache_position + [0, q) of every layer
// with index_copy_ along the sequence dim (the slot indices are a tensor computed from
// cache_position, never ints read from data), attends over all max_cache_len slots (the
// causal mask hides the slots not yet written: slot j > position of the query), and adds
// q to cache_position in place after the last layer.
//
// Invariants: no write past max_cache_len and no batch larger than max_batch — both are
// errors raised before anything is written. A smaller batch b uses rows [0, b).
// Copying a StaticCache aliases its tensors (it is a view of them, like a pytree
// unflatten over given tensors).
#pragma once

#include <functional>

#include "ingot/nn/cache.h"

namespace ingot::nn {

class StaticCache : public Cache {
 public:
  // Zero-filled buffers for up to `max_batch_size` sequences of `max_cache_len` tokens.
  StaticCache(const CacheSpec& spec, int64_t max_batch_size, int64_t max_cache_len);
  // Over existing tensors, no copy (writes go to them): per-layer keys and values, all
  // [max_batch, kv_heads, max_cache_len, head_dim] with one batch and one length, and a
  // 0-d int64 position. Sizes may be symbolic (traced tensors); dims that provably
  // differ are a ShapeError naming the tensor.
  StaticCache(std::vector<Tensor> keys, std::vector<Tensor> values, Tensor position);
  // Rebuilds a cache from named_tensors()' names, in any order ("key_cache.N",
  // "value_cache.N", "cache_position"); a missing or unknown name is a ValueError.
  static StaticCache from_named_tensors(const NamedTensors& tensors);

  Tensor new_positions(const SymInt& new_tokens) const override;
  SymInt key_length(const SymInt& new_tokens) const override { return max_cache_len_sym(); }
  std::pair<Tensor, Tensor> update(size_t layer, const Tensor& k, const Tensor& v) override;
  // Reads cache_position (eager only; a traced cache has no data).
  int64_t seq_length() const override;
  std::optional<int64_t> max_cache_len() const override { return max_cache_len_sym().maybe_int(); }
  // Rewinds cache_position to 0; the buffers keep their (now hidden) contents.
  void reset() override;
  void check_compatible(const CacheSpec& spec) const override;
  NamedTensors named_tensors() const override;

  size_t num_layers() const { return keys_.size(); }
  const Tensor& keys(size_t layer) const { return keys_.at(layer); }
  const Tensor& values(size_t layer) const { return values_.at(layer); }
  const Tensor& position() const { return position_; }
  SymInt max_cache_len_sym() const { return keys_[0].sym_size(2); }
  SymInt max_batch_size() const { return keys_[0].sym_size(0); }

  // The room check of update() on a traced cache, whose position has no data. Export
  // installs one (export/ sits above nn/) that states batch <= max_batch_size(),
  // new_tokens <= max_cache_len_sym() and position + new_tokens <= max_cache_len_sym() as
  // runtime asserts. Without one, a traced update guards the first two (decided by hint)
  // and cannot check the third; eager caches are checked by reading the position.
  using SymbolicRoomCheck =
      std::function<void(const StaticCache& cache, const SymInt& batch, const SymInt& new_tokens)>;
  static void set_symbolic_room_check(SymbolicRoomCheck check);

 private:
  // Throws before any write when `batch` rows or `new_tokens` more tokens do not fit.
  void check_room(const SymInt& batch, const SymInt& new_tokens) const;

  std::vector<Tensor> keys_, values_;
  Tensor position_;
};

}  // namespace ingot::nn
