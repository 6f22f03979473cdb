// Shared by the indexing ops (indexing.cpp, index_put.cpp): checking index dtypes in
// shape functions, and reading index tensors in kernels, bounds-checked.
//
// Kernels read every index once, up front, into plain int64 values; nothing is written
// before all indices are known to be in range, so an in-place op that throws leaves its
// target unchanged.
#pragma once

#include <cstring>
#include <string_view>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ops/registry.h"

namespace ingot {

// Throws DTypeError unless `index` is int64 or int32 (or, with allow_mask, bool or uint8).
void check_index_dtype(const Tensor& index, std::string_view op, std::string_view arg,
                       bool allow_mask = false);

// The values of `index` (int32 or int64, any strides) in logical order, each checked to
// lie in [0, size) — or in [-size, size) when `wrap`, with negatives wrapped. Throws
// ValueError naming op, the index value, the dim and its size.
std::vector<int64_t> read_indices(const Tensor& index, int64_t size, int64_t dim,
                                  std::string_view op, bool wrap);

// gather / scatter (arguments self, dim, index at 0, 1, 2): index has self's rank and fits
// inside self in every dim but `dim` (and inside src in every dim, and src has self's
// dtype, when src is given). Returns the wrapped dim; throws naming the op.
int64_t check_gather_scatter(const OpArgs& a, const Tensor* src);

// Calls fn.template operator()<U>() with U an unsigned type of `item` bytes: kernels that
// only move elements need not instantiate per dtype.
template <typename F>
void dispatch_by_size(size_t item, F&& fn) {
  switch (item) {
    case 1:
      return fn.template operator()<uint8_t>();
    case 2:
      return fn.template operator()<uint16_t>();
    case 4:
      return fn.template operator()<uint32_t>();
    default:
      return fn.template operator()<uint64_t>();
  }
}

// Strides of `t` with the one along `dim` zeroed (the iteration over an indexed dim
// moves by index value, not by position).
inline IntShape strides_without(const Tensor& t, int64_t dim) {
  IntShape s = t.strides();
  s[size_t(dim)] = 0;
  return s;
}

}  // namespace ingot
