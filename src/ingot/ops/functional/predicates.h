// Predicates over values: isnan (elementwise) and the all / any reductions to one bool.
// Together they express data-dependent conditions as tensors, e.g. the predicate of a
// cond: all(isnan(y)) ("y is all NaN").
#pragma once

#include <source_location>

#include "ingot/core/tensor.h"

namespace ingot {

// Bool tensor of self's shape: true where the value is NaN (never for integer / bool).
Tensor isnan(const Tensor& self, std::source_location where = std::source_location::current());
// 0-d bool: every element is true (non-zero, NaN counts as true); true for no elements.
Tensor all(const Tensor& self, std::source_location where = std::source_location::current());
// 0-d bool: some element is true; false for no elements.
Tensor any(const Tensor& self, std::source_location where = std::source_location::current());

}  // namespace ingot
