// Unary math and pointwise functions: neg, abs, relu (keep integer dtypes), float math
// (sqrt, exp, tanh, sigmoid, ...; integer and bool inputs compute in float32 as torch
// does), activations (silu, gelu: floating inputs only), pow and clamp.
//
// These share names with <cmath> functions; they live in namespace ingot and take
// Tensors, so call them qualified (ingot::exp) where std:: is also in scope.
#pragma once

#include <optional>
#include <string>

#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

Tensor neg(const Tensor& self);
Tensor abs(const Tensor& self);
Tensor relu(const Tensor& self);

Tensor sqrt(const Tensor& self);
Tensor rsqrt(const Tensor& self);
Tensor exp(const Tensor& self);
Tensor log(const Tensor& self);
Tensor sin(const Tensor& self);
Tensor cos(const Tensor& self);
Tensor tanh(const Tensor& self);
Tensor sigmoid(const Tensor& self);
// x * sigmoid(x)
Tensor silu(const Tensor& self);
// approximate: "none" (erf form) or "tanh".
Tensor gelu(const Tensor& self, std::string approximate = "none");

// self ** exponent with broadcasting and type promotion (int ** int stays integral;
// a negative integer Scalar exponent of an integer tensor is an error, as in torch).
Tensor pow(const Tensor& self, const Tensor& exponent);
Tensor pow(const Tensor& self, Scalar exponent);
Tensor pow(Scalar self, const Tensor& exponent);

// Elementwise min(max(self, min), max); at least one bound must be given. When
// min > max every element becomes max. NaN inputs stay NaN.
Tensor clamp(const Tensor& self, std::optional<Scalar> min,
             std::optional<Scalar> max = std::nullopt);
// Tensor bounds broadcast with self; an undefined Tensor is an absent bound.
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max);

inline Tensor operator-(const Tensor& t) { return neg(t); }

}  // namespace ingot
