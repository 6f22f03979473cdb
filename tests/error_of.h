// Test helper: the message of the exception of type E that `f` throws (a test failure,
// and "", when it throws none).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace ingot::testing {

template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace ingot::testing
