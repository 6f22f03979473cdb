// Ordering along a dim: sort and topk. Indices are int64 positions along the dim.
#pragma once

#include <source_location>
#include <utility>

#include "ingot/core/tensor.h"

namespace ingot {

// (values, indices) sorted along dim; stable (equal values keep their order), NaN sorts
// as the largest value.
std::pair<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false,
    std::source_location where = std::source_location::current());
// The k largest (or smallest) along dim, best first, ties by lower index. Requires
// 0 <= k <= size(dim). Costs about one pass over each row when k is small.
std::pair<Tensor, Tensor> topk(const Tensor& self, SymInt k, int64_t dim = -1, bool largest = true,
                               bool sorted = true,
    std::source_location where = std::source_location::current());

}  // namespace ingot
