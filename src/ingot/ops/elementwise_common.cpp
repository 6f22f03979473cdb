#include "ingot/ops/elementwise_common.h"

namespace ingot {

Shape broadcast_args(const OpArgs& a) {
  const Shape& x = a.tensor(0).sym_sizes();
  if (!a[1].is(Value::Kind::Tensor)) return x;
  return broadcast_shapes(x, a.tensor(1).sym_sizes(), a.name());
}

namespace {

// A 0-d storage for a number operand: kernels need one per call (x * 0.5), so each
// thread keeps a few and reuses one once no tensor refers to it, which keeps a planned
// decode step free of storage allocation.
std::shared_ptr<Storage> scalar_storage() {
  constexpr size_t kSlots = 32, kBytes = 16;  // 16 bytes hold any dtype's one element
  thread_local std::vector<std::shared_ptr<Storage>> slots;
  for (const auto& s : slots)
    if (s.use_count() == 1) return s;
  if (slots.size() < kSlots) {
    slots.push_back(Storage::allocate(kBytes));
    return slots.back();
  }
  return Storage::allocate(kBytes);  // every slot in use: a one-off storage
}

}  // namespace

Tensor scalar_tensor(const Scalar& s, DType dtype) {
  Tensor t = Tensor::from_storage(scalar_storage(), dtype, {}, {}, 0);
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
