// In-place arithmetic: the result is written into self (which is returned). During
// export these become functional ops plus a write-back (buffer / input mutation).
#pragma once

#include <source_location>
#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

Tensor add_(const Tensor& self, const Tensor& other, Scalar alpha = 1,
    std::source_location where = std::source_location::current());
Tensor add_(const Tensor& self, Scalar other, Scalar alpha = 1,
    std::source_location where = std::source_location::current());
Tensor sub_(const Tensor& self, const Tensor& other, Scalar alpha = 1,
    std::source_location where = std::source_location::current());
Tensor mul_(const Tensor& self, const Tensor& other,
    std::source_location where = std::source_location::current());
Tensor mul_(const Tensor& self, Scalar other,
    std::source_location where = std::source_location::current());
Tensor masked_fill_(const Tensor& self, const Tensor& mask, Scalar value,
    std::source_location where = std::source_location::current());

// Indices of the non-zero elements: [n, self.dim()] int64, row-major order. n depends on
// the data: export makes it a new unbacked size.
Tensor nonzero(const Tensor& self,
    std::source_location where = std::source_location::current());

}  // namespace ingot
