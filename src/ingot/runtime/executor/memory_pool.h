// StoragePool: the runtime's arena. Kernel outputs are carved from pooled storages; a
// storage is free again once no tensor refers to it (the executor drops each value after
// its last use, and views keep their storage alive), so intermediate memory is reused
// within a run and across runs: in steady state a run allocates nothing.
#pragma once

#include <memory>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::runtime {

class StoragePool {
 public:
  // A contiguous tensor backed by a free pooled storage of at least the needed bytes
  // (the smallest that fits), or by a new one added to the pool.
  Tensor allocate(const IntShape& sizes, DType dtype);
  size_t num_storages() const { return storages_.size(); }
  int64_t pooled_bytes() const;

 private:
  std::vector<std::shared_ptr<Storage>> storages_;
};

}  // namespace ingot::runtime
