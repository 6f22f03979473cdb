// max |a - b| / max |b| over all elements (any dtype, any strides): how far logits are
// from a reference, relative to its largest value.
#pragma once

#include <algorithm>
#include <cmath>

#include "../ops/op_test_util.h"

namespace ingot::testing {

inline double relative_diff(const Tensor& a, const Tensor& b) {
  const std::vector<double> va = values(a), vb = values(b);
  EXPECT_EQ(va.size(), vb.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < std::min(va.size(), vb.size()); ++i) {
    diff = std::max(diff, std::abs(va[i] - vb[i]));
    scale = std::max(scale, std::abs(vb[i]));
  }
  return diff / std::max(scale, 1e-30);
}

}  // namespace ingot::testing
