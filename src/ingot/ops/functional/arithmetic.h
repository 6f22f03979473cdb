// Arithmetic: add, sub, mul, div with broadcasting and PyTorch type promotion.
#pragma once

#include <optional>
#include <string>

#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

// self + alpha * other
Tensor add(const Tensor& self, const Tensor& other, Scalar alpha = 1);
Tensor add(const Tensor& self, Scalar other, Scalar alpha = 1);
// self - alpha * other
Tensor sub(const Tensor& self, const Tensor& other, Scalar alpha = 1);
Tensor sub(const Tensor& self, Scalar other, Scalar alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mul(const Tensor& self, Scalar other);
// True division (integers promote to float32); rounding_mode "trunc" or "floor" keeps
// the promoted dtype, as torch.div does.
Tensor div(const Tensor& self, const Tensor& other,
           std::optional<std::string> rounding_mode = std::nullopt);
Tensor div(const Tensor& self, Scalar other);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }

}  // namespace ingot
