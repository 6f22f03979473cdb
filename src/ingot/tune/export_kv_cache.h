// Export-friendly KVCache (torchtune.modules._export.kv_cache.KVCache): the reference
// cache plus a choice of layout and clone(), written so that a trace sees only tensor
// ops and in-place buffer mutations.
//
//   transpose_cache = true:  k_cache, v_cache [batch, num_kv_heads, max_seq_len, head_dim]
//                            (the reference layout; update takes [b, n_kv, s, h_d])
//   transpose_cache = false: [batch, max_seq_len, num_kv_heads, head_dim] (update takes
//                            the projections' [b, s, n_kv, h_d], no transpose needed)
//
// update() writes with index_put_ at the positions cache_pos[:s] (a tensor, never a C++
// int), advances cache_pos with add_, and guards the write with require(cache_pos[0] + s
// <= max_seq_len) — a runtime assert under export. clone() makes an independent cache
// with the same configuration and copied buffers; the export-friendly attention runs
// both branches of its cond on clones and copies the result back.
#pragma once

#include "ingot/tune/kv_cache.h"

namespace ingot::tune {

class ExportKVCache : public KVCache {
 public:
  ExportKVCache(int64_t batch_size, int64_t max_seq_len, int64_t num_kv_heads, int64_t head_dim,
                DType dtype, bool transpose_cache = true);

  // k_val, v_val in the layout of transpose_cache (see above). Returns (k_cache, v_cache).
  std::pair<Tensor, Tensor> update(const Tensor& k_val, const Tensor& v_val) override;
  std::shared_ptr<ExportKVCache> clone() const;
  bool transpose_cache() const { return transpose_cache_; }

 private:
  bool transpose_cache_;
};

}  // namespace ingot::tune
