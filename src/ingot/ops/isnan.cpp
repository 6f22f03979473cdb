// isnan / isinf: elementwise "is this value NaN" / "is it +-inf", a bool tensor of the
// input's shape. Integer and bool inputs have neither (all false), as torch's.
#include <cmath>

#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/predicates.h"

namespace ingot {
namespace {

void isnan_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  INGOT_DISPATCH_ALL_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      cpu::elementwise<bool, T>(out[0], {&x}, [](T) { return false; });
    } else {
      cpu::elementwise<bool, T>(out[0], {&x}, [](T v) {
        const opmath_t<T> m(v);
        return m != m;
      });
    }
  });
}

const OpRegistrar kIsnan(
    define_op("isnan(Tensor self) -> Tensor")
        .shape([](const OpArgs& a) {
          return std::vector<OutputMeta>{{DType::Bool, a.tensor(0).sym_sizes()}};
        })
        .cpu(isnan_kernel));

void isinf_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  INGOT_DISPATCH_ALL_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      cpu::elementwise<bool, T>(out[0], {&x}, [](T) { return false; });
    } else {
      cpu::elementwise<bool, T>(out[0], {&x}, [](T v) { return std::isinf(opmath_t<T>(v)); });
    }
  });
}

const OpRegistrar kIsinf(
    define_op("isinf(Tensor self) -> Tensor")
        .shape([](const OpArgs& a) {
          return std::vector<OutputMeta>{{DType::Bool, a.tensor(0).sym_sizes()}};
        })
        .cpu(isinf_kernel));

const OpHandle kIsnanOp("isnan");

}  // namespace

Tensor isnan(const Tensor& self, std::source_location where) {
  CallSiteScope call_site(where);
  return kIsnanOp({self})[0];
}

}  // namespace ingot
