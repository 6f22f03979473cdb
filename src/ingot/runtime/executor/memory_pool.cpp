#include "ingot/runtime/executor/memory_pool.h"

namespace ingot::runtime {

Tensor StoragePool::allocate(const IntShape& sizes, DType dtype) {
  const size_t nbytes = std::max<size_t>(size_t(shape_numel(sizes)) * itemsize(dtype), 1);
  std::shared_ptr<Storage>* best = nullptr;
  for (auto& s : storages_) {
    // use_count 1: only the pool holds it, so no live tensor or view uses it.
    if (s.use_count() == 1 && s->nbytes() >= nbytes && (!best || s->nbytes() < (*best)->nbytes())) {
      best = &s;
    }
  }
  if (!best) {
    storages_.push_back(Storage::allocate(nbytes));
    best = &storages_.back();
  }
  return Tensor::from_storage(*best, dtype, sizes, contiguous_strides(sizes), 0);
}

int64_t StoragePool::pooled_bytes() const {
  int64_t n = 0;
  for (const auto& s : storages_) n += int64_t(s->nbytes());
  return n;
}

}  // namespace ingot::runtime
