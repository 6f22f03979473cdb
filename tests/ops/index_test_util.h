// Helpers for the reference implementations of the joining, indexing and sorting tests:
// moving between flat row-major positions and multi-indices.
#pragma once

#include <string>

#include "ingot/ops/registry.h"
#include "op_test_util.h"

namespace ingot::testing {

inline IntShape unravel(int64_t flat, const IntShape& sizes) {
  IntShape idx(sizes.size(), 0);
  for (size_t d = sizes.size(); d-- > 0;) {
    idx[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return idx;
}

inline int64_t ravel(const IntShape& idx, const IntShape& sizes) {
  int64_t flat = 0;
  for (size_t d = 0; d < sizes.size(); ++d) flat = flat * sizes[d] + idx[d];
  return flat;
}

// Random index tensor of `sizes` with values in [lo, hi], of int64 or int32.
inline Tensor random_index(const IntShape& sizes, int64_t lo, int64_t hi, std::mt19937& rng,
                           DType dtype = DType::I64) {
  return random_tensor(sizes, dtype, rng, double(lo), double(hi));
}

// Random small values valid for any dtype: integers in [-9, 9] ([0, 9] for uint8, 0/1
// for bool), floats in [-9, 9).
inline Tensor random_values(const IntShape& sizes, DType dtype, std::mt19937& rng) {
  return random_tensor(sizes, dtype, rng, dtype == DType::U8 ? 0 : -9, 9);
}

// Values rounded as storing them in `dtype` would (for reference results).
inline double round_to(double v, DType dtype) {
  switch (dtype) {
    case DType::F16:
      return float(Half(float(v)));
    case DType::BF16:
      return float(BFloat16(float(v)));
    case DType::F32:
      return double(float(v));
    case DType::Bool:
      return v != 0;
    default:
      return is_integral(dtype) ? std::trunc(v) : v;
  }
}

// Runs f and checks it throws E with a message containing `needle`.
template <typename E, typename F>
void expect_throw_with(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception containing '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace ingot::testing
