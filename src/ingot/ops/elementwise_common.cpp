#include "ingot/ops/elementwise_common.h"

namespace ingot {

Shape broadcast_args(const OpArgs& a) {
  const Shape& x = a.tensor(0).sym_sizes();
  if (!a[1].is(Value::Kind::Tensor)) return x;
  return broadcast_shapes(x, a.tensor(1).sym_sizes(), a.name());
}

Tensor scalar_tensor(const Scalar& s, DType dtype) {
  Tensor t = Tensor::empty({}, dtype);
  INGOT_DISPATCH_ALL_TYPES(dtype, "scalar_tensor", [&]<typename T>() {
    *static_cast<T*>(t.raw_data()) = s.to<T>();
  });
  return t;
}

Tensor operand_as(const OpArgs& a, size_t i, DType dtype) {
  if (a[i].is(Value::Kind::Tensor)) return to(a.tensor(i), dtype);
  return scalar_tensor(a.scalar(i), dtype);
}

}  // namespace ingot
