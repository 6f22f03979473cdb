// Helpers shared by the export tests.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ingot/ops/functional.h"
#include "../ops/op_test_util.h"

namespace ingot::testing {

inline Tensor rand_tensor(const IntShape& sizes, uint32_t seed, DType dtype = DType::F32) {
  std::mt19937 rng(seed);
  return random_tensor(sizes, dtype, rng);
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Element-wise |a - b| <= tol, same shapes.
inline void expect_near_tensors(const Tensor& a, const Tensor& b, double tol = 0.0) {
  ASSERT_EQ(a.sizes(), b.sizes());
  Tensor da = contiguous(to(a, DType::F64)), db = contiguous(to(b, DType::F64));
  for (int64_t i = 0; i < a.numel(); ++i) {
    ASSERT_NEAR(da.data<double>()[i], db.data<double>()[i], tol) << "element " << i;
  }
}

}  // namespace ingot::testing
