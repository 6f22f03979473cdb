// Arithmetic: add, sub, mul, div with broadcasting and PyTorch type promotion.
#pragma once

#include <source_location>
#include <optional>
#include <string>

#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

// self + alpha * other
Tensor add(const Tensor& self, const Tensor& other, Scalar alpha = 1,
    std::source_location where = std::source_location::current());
Tensor add(const Tensor& self, Scalar other, Scalar alpha = 1,
    std::source_location where = std::source_location::current());
// self - alpha * other
Tensor sub(const Tensor& self, const Tensor& other, Scalar alpha = 1,
    std::source_location where = std::source_location::current());
Tensor sub(const Tensor& self, Scalar other, Scalar alpha = 1,
    std::source_location where = std::source_location::current());
Tensor mul(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor mul(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());
// True division (integers promote to float32); rounding_mode "trunc" or "floor" keeps
// the promoted dtype, as torch.div does.
Tensor div(const Tensor& self, const Tensor& other,
           std::optional<std::string> rounding_mode = std::nullopt,
    std::source_location where = std::source_location::current());
Tensor div(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }

}  // namespace ingot
