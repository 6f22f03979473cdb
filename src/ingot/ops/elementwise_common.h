// Building blocks for elementwise ops: broadcasting shape functions with PyTorch's
// result-type rules, and CPU kernels that compute in the op-math type (float for the
// 16-bit floats) after converting inputs to the common dtype.
#pragma once

#include <span>

#include "ingot/ops/cpu/loops.h"
#include "ingot/ops/functional/views.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {

// Broadcast shape of tensor arguments 0 and 1 (a number in position 1 is a 0-d operand).
Shape broadcast_args(const OpArgs& a);

// Tensor for a Scalar operand: a 0-d tensor of `dtype`.
Tensor scalar_tensor(const Scalar& s, DType dtype);

// Operand i converted to `dtype`: a Tensor argument or a number argument.
Tensor operand_as(const OpArgs& a, size_t i, DType dtype);

// Runs out[i] = f(x[i], y[i]) with x and y already of dtype T (broadcast to out), f in
// opmath_t<T>. The output may be of another dtype R (comparisons write bool).
template <typename T, typename R = T, typename F>
void binary_loop(const Tensor& out, const Tensor& x, const Tensor& y, F f) {
  using M = opmath_t<T>;
  cpu::elementwise<R, T, T>(out, {&x, &y}, [f](T u, T v) { return R(f(M(u), M(v))); });
}

// Runs out[i] = f(x[i]) in opmath_t<T>.
template <typename T, typename R = T, typename F>
void unary_loop(const Tensor& out, const Tensor& x, F f) {
  using M = opmath_t<T>;
  cpu::elementwise<R, T>(out, {&x}, [f](T u) { return R(f(M(u))); });
}

}  // namespace ingot
