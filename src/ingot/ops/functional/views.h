// View and layout functions: results share storage with the input where possible.
#pragma once

#include <source_location>
#include "ingot/core/tensor.h"
#include "ingot/ops/value.h"

namespace ingot {

// `size` may contain one -1, inferred from the element count.
Tensor view(const Tensor& t, const SymIntList& size,
    std::source_location where = std::source_location::current());
// A view when the strides allow it, a copy otherwise.
Tensor reshape(const Tensor& t, const SymIntList& shape,
    std::source_location where = std::source_location::current());
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1,
    std::source_location where = std::source_location::current());
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1,
    std::source_location where = std::source_location::current());
Tensor permute(const Tensor& t, const IntShape& dims,
    std::source_location where = std::source_location::current());
// Python-style t[start:end:step] along dim; start/end clamp to the size.
Tensor slice(const Tensor& t, int64_t dim, std::optional<SymInt> start,
             std::optional<SymInt> end, SymInt step = 1,
    std::source_location where = std::source_location::current());
Tensor select(const Tensor& t, int64_t dim, SymInt index,
    std::source_location where = std::source_location::current());
Tensor narrow(const Tensor& t, int64_t dim, SymInt start, SymInt length,
    std::source_location where = std::source_location::current());
// -1 keeps a dim's size; new leading dims may be added.
Tensor expand(const Tensor& t, const SymIntList& size,
    std::source_location where = std::source_location::current());
Tensor unsqueeze(const Tensor& t, int64_t dim,
    std::source_location where = std::source_location::current());
Tensor squeeze(const Tensor& t,
    std::source_location where = std::source_location::current());
Tensor squeeze(const Tensor& t, int64_t dim,
    std::source_location where = std::source_location::current());

// The tensor itself when contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& t,
    std::source_location where = std::source_location::current());
Tensor clone(const Tensor& t,
    std::source_location where = std::source_location::current());
// The tensor itself when already of `dtype`, else a converted copy.
Tensor to(const Tensor& t, DType dtype,
    std::source_location where = std::source_location::current());
// Writes src (broadcast, converted) into dst in place; returns dst.
Tensor copy_(const Tensor& dst, const Tensor& src,
    std::source_location where = std::source_location::current());

}  // namespace ingot
