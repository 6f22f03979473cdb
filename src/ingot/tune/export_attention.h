// Export-friendly MultiHeadAttention (torchtune.modules._export.attention): the same
// constructor arguments and forward signature as MultiHeadAttention
// (multi_head_attention.h) and the same outputs, written so that export can trace it.
//
// Differences from the reference, as in seed 000:
//  * "compute k / v from y, or read the cache" is a cond on all(isnan(y)): an all-NaN y
//    is the export form of y = None. Neither branch may mutate its inputs, so both work on
//    a clone() of the cache (the false branch computes k, v and updates the clone) and
//    return (k_cache, v_cache, cache_pos); the results are copied back into the real
//    cache buffers after the cond (in-place buffer mutations).
//  * the attention itself is the SDPA submodule "_sdpa" (sdpa.h), replaceable;
//  * the cache is an ExportKVCache in the [b, s, n_kv, h_d] layout (transpose_cache =
//    false), advanced with add_ on its cache_pos buffer;
//  * the SDPA gets attn_dropout only when built in training mode (0 otherwise).
// With no cache (or cache updates disabled) k, v come from y directly, as the reference.
// An undefined y with a cache reads the cache without a cond (a static choice).
#pragma once

#include "ingot/tune/export_kv_cache.h"
#include "ingot/tune/multi_head_attention.h"
#include "ingot/tune/sdpa.h"

namespace ingot::tune {

class ExportMultiHeadAttention : public nn::Module {
 public:
  // args.kv_cache, when given, must be an ExportKVCache with transpose_cache = false.
  explicit ExportMultiHeadAttention(MultiHeadAttentionArgs args);

  // As MultiHeadAttention::forward; y all NaN = read the cache (see above). With a cache,
  // s_kv of the mask is the cache's max_seq_len.
  Tensor forward(const Tensor& x, const Tensor& y = Tensor(), const Tensor& mask = Tensor(),
                 const Tensor& input_pos = Tensor()) const;

  // Creates an ExportKVCache(batch_size, max_seq_len, num_kv_heads, head_dim, dtype,
  // transpose_cache = false), tells the SDPA, enables updates. With a cache already
  // present: a warning on stderr, the cache is kept, returns false.
  bool setup_cache(int64_t batch_size, DType dtype, int64_t max_seq_len);
  // ValueError when no cache is set up; otherwise ExportKVCache::reset().
  void reset_cache();
  bool cache_enabled() const { return cache_enabled_; }
  void set_cache_enabled(bool on) { cache_enabled_ = on; }

  const MultiHeadAttentionArgs& args() const { return args_; }
  std::shared_ptr<ExportKVCache> kv_cache() const { return kv_cache_; }
  // The attention submodule ("_sdpa"); set_sdpa replaces it (e.g. with a subclass).
  std::shared_ptr<SDPA> sdpa() const;
  void set_sdpa(std::shared_ptr<SDPA> sdpa);

 private:
  // k, v [b, s_y, n_kv, h_d] from y (projections, rotary on k, k_norm).
  std::pair<Tensor, Tensor> calculate_kv(const Tensor& y, const SymInt& b,
                                         const Tensor& input_pos) const;

  MultiHeadAttentionArgs args_;
  std::shared_ptr<ExportKVCache> kv_cache_;
  bool cache_enabled_ = false;
};

// Replaces every reference MultiHeadAttention below `module` (recursively, not `module`
// itself) by an ExportMultiHeadAttention built from the same arguments: the projections,
// rotary embedding and norms are the same module objects (weights shared, no copy);
// cache_enabled and the training flag carry over. A reference module that already has a
// KV cache is a ValueError (replace before setup_cache). Returns how many were replaced.
int replace_mha_with_inference_mha(nn::Module& module);

}  // namespace ingot::tune
