// random_tensor with the range clipped to what the dtype holds (no negative values for
// uint8, whose conversion from a negative double is undefined).
#pragma once

#include "op_test_util.h"

namespace ingot::testing {

inline Tensor random_for_dtype(const IntShape& sizes, DType dtype, std::mt19937& rng,
                               double lo = -2.0, double hi = 2.0) {
  if (dtype == DType::U8) lo = std::max(lo, 0.0);
  return random_tensor(sizes, dtype, rng, lo, hi);
}

}  // namespace ingot::testing
