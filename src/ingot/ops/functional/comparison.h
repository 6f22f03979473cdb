// Comparisons and logical ops (bool results) and mask-driven selection: where,
// masked_fill.
#pragma once

#include <source_location>
#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

// Elementwise comparisons in the promoted dtype of both operands (torch.result_type);
// the result is a bool tensor of the broadcast shape.
Tensor eq(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor eq(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());
Tensor ne(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor ne(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());
Tensor lt(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor lt(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());
Tensor le(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor le(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());
Tensor gt(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor gt(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());
Tensor ge(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor ge(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());

// Truth of each element (non-zero; NaN is true) combined; bool result, any input dtype.
Tensor logical_and(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor logical_or(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor logical_not(const Tensor& self,
    std::source_location where = std::source_location::current());

// condition ? self : other, all three broadcast; condition must be bool; the result
// has the promoted dtype of self and other.
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());

// A copy of self (broadcast with mask) with `value` where mask is true. mask must be
// bool; the Tensor overload takes a 0-d value tensor. The result keeps self's dtype.
Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value,
    std::source_location where = std::source_location::current());
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value,
    std::source_location where = std::source_location::current());

}  // namespace ingot
