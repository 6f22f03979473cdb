#include "ingot/tune/export_kv_cache.h"

#include "ingot/export/control_flow.h"
#include "ingot/ops/functional.h"
#include "ingot/tune/data_dependent.h"

namespace ingot::tune {
namespace {

IntShape layout(int64_t batch, int64_t max_seq_len, int64_t n_kv, int64_t head_dim,
                bool transpose) {
  if (transpose) return {batch, n_kv, max_seq_len, head_dim};
  return {batch, max_seq_len, n_kv, head_dim};
}

}  // namespace

ExportKVCache::ExportKVCache(int64_t batch_size, int64_t max_seq_len, int64_t num_kv_heads,
                             int64_t head_dim, DType dtype, bool transpose_cache)
    : KVCache("ExportKVCache", batch_size, max_seq_len, num_kv_heads, head_dim, dtype,
              layout(batch_size, max_seq_len, num_kv_heads, head_dim, transpose_cache)),
      transpose_cache_(transpose_cache) {}

std::pair<Tensor, Tensor> ExportKVCache::update(const Tensor& k_val, const Tensor& v_val) {
  const int64_t seq_dim = transpose_cache_ ? 2 : 1;
  INGOT_CHECK(k_val.dim() == 4 && v_val.dim() == 4, ShapeError,
              "[ExportKVCache.update] k_val and v_val must be {}, got {} and {}",
              transpose_cache_ ? "[b, n_kv, s, h_d]" : "[b, s, n_kv, h_d]", k_val.shape_string(),
              v_val.shape_string());
  check_batch(k_val.sym_size(0));
  const SymInt seq_len = k_val.sym_size(seq_dim);
  const SymInt start = item_int(select(cache_pos(), 0, 0));
  require(start + seq_len <= SymInt(max_seq_len()), [&] {
    return fmt::format(
        "[ExportKVCache.update] writing {} tokens at position {} goes past max_seq_len {}; "
        "reset() the cache or set it up with a larger max_seq_len",
        seq_len.str(), start.str(), max_seq_len());
  });
  Tensor positions = slice(cache_pos(), 0, 0, seq_len);  // [s]
  std::vector<std::optional<Tensor>> at(size_t(seq_dim), std::nullopt);
  at.push_back(positions);  // k_cache[:, pos] or k_cache[:, :, pos]
  index_put_(k_cache(), at, k_val);
  index_put_(v_cache(), at, v_val);
  add_(cache_pos(), symint_to_tensor(seq_len));
  return {k_cache(), v_cache()};
}

std::shared_ptr<ExportKVCache> ExportKVCache::clone() const {
  auto c = std::make_shared<ExportKVCache>(batch_size(), max_seq_len(), num_kv_heads(), head_dim(),
                                           dtype(), transpose_cache_);
  copy_(c->k_cache(), k_cache());
  copy_(c->v_cache(), v_cache());
  copy_(c->cache_pos(), cache_pos());
  return c;
}

}  // namespace ingot::tune
