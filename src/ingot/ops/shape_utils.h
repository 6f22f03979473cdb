// Shape and dtype rules shared by op shape functions: broadcasting and PyTorch's
// type promotion for mixed tensor / scalar arguments.
#pragma once

#include <span>

#include "ingot/core/tensor.h"
#include "ingot/ops/value.h"

namespace ingot {

// NumPy/PyTorch broadcasting of two shapes (aligned at the right; size 1 stretches).
// Throws ShapeError naming the op and the mismatching dim.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

// The dtype of an elementwise op over these arguments, following torch.result_type:
// tensors with dims outrank 0-d tensors, which outrank Python numbers, unless the
// lower-ranked argument is of a higher category (bool < integer < floating).
// Accepts Values holding Tensors (undefined ones ignored) and numbers.
DType result_type(std::span<const Value> operands);

// Wraps dim into [0, rank) (rank 0 accepts 0 and -1); throws ValueError naming op.
int64_t wrap_dim(int64_t dim, int64_t rank, std::string_view op);

// Checks a shape function's input is a real tensor of a floating dtype; message names op
// and argument.
void check_floating(const Tensor& t, std::string_view op, std::string_view arg);

}  // namespace ingot
