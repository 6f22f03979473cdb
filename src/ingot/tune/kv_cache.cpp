#include "ingot/tune/kv_cache.h"

#include "ingot/ops/functional.h"

namespace ingot::tune {

KVCache::KVCache(int64_t batch_size, int64_t max_seq_len, int64_t num_kv_heads, int64_t head_dim,
                 DType dtype)
    : KVCache("KVCache", batch_size, max_seq_len, num_kv_heads, head_dim, dtype,
              {batch_size, num_kv_heads, max_seq_len, head_dim}) {}

KVCache::KVCache(std::string type_name, int64_t batch_size, int64_t max_seq_len,
                 int64_t num_kv_heads, int64_t head_dim, DType dtype, const IntShape& cache_shape)
    : nn::Module(std::move(type_name)),
      batch_size_(batch_size),
      max_seq_len_(max_seq_len),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      dtype_(dtype) {
  INGOT_CHECK(batch_size > 0 && max_seq_len > 0 && num_kv_heads > 0 && head_dim > 0, ValueError,
              "[{}] batch_size ({}), max_seq_len ({}), num_kv_heads ({}) and head_dim ({}) must "
              "be positive",
              this->type_name(), batch_size, max_seq_len, num_kv_heads, head_dim);
  // Built with ops (not raw allocations) so that a clone made while tracing is traced.
  k_cache_ = register_buffer("k_cache", zeros(cache_shape, dtype), false);
  v_cache_ = register_buffer("v_cache", zeros(cache_shape, dtype), false);
  cache_pos_ = register_buffer("cache_pos", arange(max_seq_len, DType::I64), false);
}

void KVCache::check_batch(const SymInt& batch) const {
  INGOT_CHECK(!(batch > SymInt(batch_size_)).guard_bool(), ValueError,
              "[{}] The current cache has been setup with a batch size of {}, but found new key "
              "tensors with batch size {}! Set the cache up with a larger batch_size.",
              type_name(), batch_size_, batch.str());
}

std::pair<Tensor, Tensor> KVCache::update(const Tensor& k_val, const Tensor& v_val) {
  INGOT_CHECK(k_val.dim() == 4 && v_val.dim() == 4, ShapeError,
              "[{}.update] k_val and v_val must be [b, n_kv, s, h_d], got {} and {}", type_name(),
              k_val.shape_string(), v_val.shape_string());
  check_batch(k_val.sym_size(0));
  const int64_t seq_len = k_val.size(2);
  const int64_t start = size();
  INGOT_CHECK(start + seq_len <= max_seq_len_, ValueError,
              "[{}.update] writing {} tokens at position {} goes past max_seq_len {}; reset() "
              "the cache or set it up with a larger max_seq_len",
              type_name(), seq_len, start, max_seq_len_);
  Tensor positions = slice(*cache_pos_, 0, 0, seq_len);  // [s]
  index_put_(*k_cache_, {std::nullopt, std::nullopt, positions}, k_val);
  index_put_(*v_cache_, {std::nullopt, std::nullopt, positions}, v_val);
  add_(*cache_pos_, seq_len);
  return {*k_cache_, *v_cache_};
}

void KVCache::reset() {
  copy_(*k_cache_, zeros({}, dtype_));
  copy_(*v_cache_, zeros({}, dtype_));
  copy_(*cache_pos_, arange(max_seq_len_, DType::I64));
}

int64_t KVCache::size() const {
  return select(*cache_pos_, 0, 0).item<int64_t>();
}

}  // namespace ingot::tune
