// Shared helpers for the tune/ tests: fixture files made by
// tools/reference/make_tune_fixtures.py and tensor comparison.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../ops/op_test_util.h"
#include "ingot/formats/safetensors.h"

namespace ingot::tune::testing {

inline formats::SafetensorsFile tune_fixture(const std::string& name) {
  return formats::SafetensorsFile::open(std::string(INGOT_FIXTURES_DIR) + "/tune/" + name);
}

// max |a - b| over all elements (shapes must match; NaN counts as infinitely far).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  if (a.sizes() != b.sizes()) return INFINITY;
  const auto va = ingot::testing::values(a), vb = ingot::testing::values(b);
  double m = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    const double d = std::abs(va[i] - vb[i]);
    m = std::isnan(d) ? INFINITY : std::max(m, d);
  }
  return m;
}

// Runs fn and checks it throws E with every fragment in its message.
template <typename E, typename F>
void expect_error(F&& fn, std::initializer_list<std::string> fragments) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& f : fragments) {
      EXPECT_NE(msg.find(f), std::string::npos) << "missing '" << f << "' in: " << msg;
    }
  }
}

}  // namespace ingot::tune::testing
