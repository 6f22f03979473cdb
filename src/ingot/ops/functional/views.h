// View and layout functions: results share storage with the input where possible.
#pragma once

#include "ingot/core/tensor.h"
#include "ingot/ops/value.h"

namespace ingot {

// `size` may contain one -1, inferred from the element count.
Tensor view(const Tensor& t, const SymIntList& size);
// A view when the strides allow it, a copy otherwise.
Tensor reshape(const Tensor& t, const SymIntList& shape);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& t, const IntShape& dims);
// Python-style t[start:end:step] along dim; start/end clamp to the size.
Tensor slice(const Tensor& t, int64_t dim, std::optional<SymInt> start,
             std::optional<SymInt> end, SymInt step = 1);
Tensor select(const Tensor& t, int64_t dim, SymInt index);
Tensor narrow(const Tensor& t, int64_t dim, SymInt start, SymInt length);
// -1 keeps a dim's size; new leading dims may be added.
Tensor expand(const Tensor& t, const SymIntList& size);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);

// The tensor itself when contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
// The tensor itself when already of `dtype`, else a converted copy.
Tensor to(const Tensor& t, DType dtype);
// Writes src (broadcast, converted) into dst in place; returns dst.
Tensor copy_(const Tensor& dst, const Tensor& src);

}  // namespace ingot
