// torchtune's reference KVCache (torchtune.modules.KVCache): a static cache of keys and
// values for one attention layer, written in place as tokens arrive.
//
// Buffers (non-persistent, so not in the state dict):
//   k_cache, v_cache  [batch_size, num_kv_heads, max_seq_len, head_dim], zeros at first
//   cache_pos         int64 [max_seq_len] = size, size + 1, ...: the next write positions
// update(k, v) writes k, v at cache_pos[:s], advances cache_pos by s (in place) and
// returns the whole cache. The reference is eager-only (it reads cache_pos[0] to check
// bounds); ExportKVCache (export_kv_cache.h) is the export-friendly variant.
#pragma once

#include <memory>
#include <utility>

#include "ingot/nn/module.h"

namespace ingot::tune {

class KVCache : public nn::Module {
 public:
  KVCache(int64_t batch_size, int64_t max_seq_len, int64_t num_kv_heads, int64_t head_dim,
          DType dtype);

  // k_val, v_val [b, num_kv_heads, s, head_dim] with b <= batch_size (ValueError
  // otherwise) and size() + s <= max_seq_len. Returns (k_cache, v_cache).
  virtual std::pair<Tensor, Tensor> update(const Tensor& k_val, const Tensor& v_val);
  // Zeros the caches and rewinds cache_pos to 0, 1, ..., max_seq_len - 1.
  void reset();
  // Tokens written since the last reset: cache_pos[0] (reads data; eager only).
  int64_t size() const;

  Tensor& k_cache() const { return *k_cache_; }
  Tensor& v_cache() const { return *v_cache_; }
  Tensor& cache_pos() const { return *cache_pos_; }
  int64_t batch_size() const { return batch_size_; }
  int64_t max_seq_len() const { return max_seq_len_; }
  int64_t num_kv_heads() const { return num_kv_heads_; }
  int64_t head_dim() const { return head_dim_; }
  DType dtype() const { return dtype_; }

 protected:
  // For variants with another layout: buffers of `cache_shape`, built with ops.
  KVCache(std::string type_name, int64_t batch_size, int64_t max_seq_len, int64_t num_kv_heads,
          int64_t head_dim, DType dtype, const IntShape& cache_shape);
  // ValueError when the new keys' batch exceeds the cache's.
  void check_batch(const SymInt& batch) const;

 private:
  int64_t batch_size_, max_seq_len_, num_kv_heads_, head_dim_;
  DType dtype_;
  Tensor* k_cache_;
  Tensor* v_cache_;
  Tensor* cache_pos_;
};

}  // namespace ingot::tune
