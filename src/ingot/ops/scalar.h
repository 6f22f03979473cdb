// Scalar: a number argument of an op (ATen's `Scalar`): bool, integer or floating.
//
// Its kind matters for type promotion: `int_tensor * 2` stays integral while
// `int_tensor * 2.5` becomes float (PyTorch's "wrapped number" rules).
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "ingot/core/dtype.h"

namespace ingot {

class Scalar {
 public:
  Scalar(bool v) : v_(v) {}  // NOLINT: numbers convert implicitly
  Scalar(int v) : v_(int64_t(v)) {}  // NOLINT
  Scalar(int64_t v) : v_(v) {}  // NOLINT
  Scalar(float v) : v_(double(v)) {}  // NOLINT
  Scalar(double v) : v_(v) {}  // NOLINT

  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_integral() const { return std::holds_alternative<int64_t>(v_); }
  bool is_floating() const { return std::holds_alternative<double>(v_); }

  double to_double() const {
    return std::visit([](auto x) { return double(x); }, v_);
  }
  int64_t to_int() const {
    return std::visit([](auto x) { return int64_t(x); }, v_);
  }
  bool to_bool() const {
    return std::visit([](auto x) { return x != decltype(x)(0); }, v_);
  }
  // The value converted to element type T (16-bit floats via float).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return T(to_int());
    else if constexpr (sizeof(T) == 2) return T(float(to_double()));  // Half, BFloat16
    else return T(to_double());
  }

  // The dtype a tensor holding this value would get: bool, int64 or float32
  // (PyTorch's default dtype for Python floats).
  DType default_dtype() const {
    if (is_bool()) return DType::Bool;
    if (is_integral()) return DType::I64;
    return DType::F32;
  }

  std::string str() const;

  bool operator==(const Scalar& o) const { return v_ == o.v_; }

 private:
  std::variant<bool, int64_t, double> v_;
};

}  // namespace ingot
