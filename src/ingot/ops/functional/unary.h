// Unary math and pointwise functions: neg, abs, relu (keep integer dtypes), float math
// (sqrt, exp, tanh, sigmoid, ...; integer and bool inputs compute in float32 as torch
// does), activations (silu, gelu: floating inputs only), pow and clamp.
//
// These share names with <cmath> functions; they live in namespace ingot and take
// Tensors, so call them qualified (ingot::exp) where std:: is also in scope.
#pragma once

#include <source_location>
#include <optional>
#include <string>

#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

Tensor neg(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor abs(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor relu(const Tensor& self,
    std::source_location where = std::source_location::current());

Tensor sqrt(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor rsqrt(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor exp(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor log(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor sin(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor cos(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor tanh(const Tensor& self,
    std::source_location where = std::source_location::current());
Tensor sigmoid(const Tensor& self,
    std::source_location where = std::source_location::current());
// x * sigmoid(x)
Tensor silu(const Tensor& self,
    std::source_location where = std::source_location::current());
// approximate: "none" (erf form) or "tanh".
Tensor gelu(const Tensor& self, std::string approximate = "none",
    std::source_location where = std::source_location::current());

// self ** exponent with broadcasting and type promotion (int ** int stays integral;
// a negative integer Scalar exponent of an integer tensor is an error, as in torch).
Tensor pow(const Tensor& self, const Tensor& exponent,
    std::source_location where = std::source_location::current());
Tensor pow(const Tensor& self, Scalar exponent,
    std::source_location where = std::source_location::current());
Tensor pow(Scalar self, const Tensor& exponent,
    std::source_location where = std::source_location::current());

// Elementwise min(max(self, min), max); at least one bound must be given. When
// min > max every element becomes max. NaN inputs stay NaN.
Tensor clamp(const Tensor& self, std::optional<Scalar> min,
             std::optional<Scalar> max = std::nullopt,
    std::source_location where = std::source_location::current());
// Tensor bounds broadcast with self; an undefined Tensor is an absent bound.
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max,
    std::source_location where = std::source_location::current());

inline Tensor operator-(const Tensor& t) { return neg(t); }

}  // namespace ingot
