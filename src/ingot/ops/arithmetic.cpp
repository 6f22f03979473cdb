// add / sub / mul / div, Tensor and Scalar overloads.
#include <cmath>

#include "ingot/ops/registry.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/arithmetic.h"

namespace ingot {
namespace {

// Result dtype of a binary arithmetic op; true division of integers gives float32.
DType arithmetic_dtype(const OpArgs& a, bool true_division) {
  std::array<Value, 2> operands{a[0], a[1]};
  DType t = result_type(operands);
  if (true_division && !is_floating(t)) return DType::F32;
  return t;
}

ShapeFn arithmetic_shape(bool true_division) {
  return [true_division](const OpArgs& a) {
    DType t = arithmetic_dtype(a, true_division);
    INGOT_CHECK(!(t == DType::Bool && a.op().schema.name == "sub"), DTypeError,
                "[{}] subtracting bool tensors is not supported; use logical_xor", a.name());
    return std::vector<OutputMeta>{{t, broadcast_args(a)}};
  };
}

// add/sub: out = x + sign * alpha * y, alpha in position 2.
CpuKernel add_kernel(int sign) {
  return [sign](const OpArgs& a, std::span<const Tensor> out) {
    const DType t = out[0].dtype();
    Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
    const Scalar& alpha = a.scalar(2);
    INGOT_DISPATCH_ALL_TYPES(t, a.name(), [&]<typename T>() {
      using M = opmath_t<T>;
      if constexpr (std::is_same_v<T, bool>) {
        binary_loop<T>(out[0], x, y, [](bool u, bool v) { return u || v; });
      } else {
        const M al = M(sign) * alpha.to<M>();
        if (al == M(1)) binary_loop<T>(out[0], x, y, [](M u, M v) { return u + v; });
        else if (al == M(-1)) binary_loop<T>(out[0], x, y, [](M u, M v) { return u - v; });
        else binary_loop<T>(out[0], x, y, [al](M u, M v) { return u + al * v; });
      }
    });
  };
}

void mul_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const DType t = out[0].dtype();
  Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
  INGOT_DISPATCH_ALL_TYPES(t, a.name(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      binary_loop<T>(out[0], x, y, [](bool u, bool v) { return u && v; });
    } else {
      binary_loop<T>(out[0], x, y, [](auto u, auto v) { return u * v; });
    }
  });
}

// Integer division by zero is an error in PyTorch (it raises ZeroDivisionError).
template <typename M>
void check_int_divisor(M v, const std::string& op) {
  INGOT_CHECK(v != M(0), ValueError, "[{}] integer division by zero", op);
}

void div_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const DType t = out[0].dtype();
  Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
  std::string mode = a.size() > 2 && !a[2].is_none() ? a.string(2) : "";
  const std::string& name = a.name();
  INGOT_DISPATCH_NUMERIC_TYPES(t, name, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_floating_point_v<M>) {
      if (mode.empty()) binary_loop<T>(out[0], x, y, [](M u, M v) { return u / v; });
      else if (mode == "trunc") binary_loop<T>(out[0], x, y, [](M u, M v) { return std::trunc(u / v); });
      else binary_loop<T>(out[0], x, y, [](M u, M v) { return std::floor(u / v); });
    } else {
      // Integer inputs only reach here with a rounding mode.
      bool floor_mode = mode == "floor";
      binary_loop<T>(out[0], x, y, [floor_mode, &name](M u, M v) {
        check_int_divisor(v, name);
        M q = u / v;
        if (floor_mode && (u % v != 0) && ((u < 0) != (v < 0))) --q;
        return q;
      });
    }
  });
}

ShapeFn div_mode_shape() {
  return [](const OpArgs& a) {
    const std::string& mode = a.string(2);
    INGOT_CHECK(mode == "trunc" || mode == "floor", ValueError,
                "[{}] rounding_mode must be 'trunc', 'floor' or None, got '{}'", a.name(), mode);
    return std::vector<OutputMeta>{{arithmetic_dtype(a, false), broadcast_args(a)}};
  };
}

const OpRegistrar kAddTensor(
    define_op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
        .shape(arithmetic_shape(false))
        .cpu(add_kernel(1)));
const OpRegistrar kAddScalar(
    define_op("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
        .shape(arithmetic_shape(false))
        .cpu(add_kernel(1)));
const OpRegistrar kSubTensor(
    define_op("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
        .shape(arithmetic_shape(false))
        .cpu(add_kernel(-1)));
const OpRegistrar kSubScalar(
    define_op("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
        .shape(arithmetic_shape(false))
        .cpu(add_kernel(-1)));
const OpRegistrar kMulTensor(define_op("mul.Tensor(Tensor self, Tensor other) -> Tensor")
                                 .shape(arithmetic_shape(false))
                                 .cpu(mul_kernel));
const OpRegistrar kMulScalar(define_op("mul.Scalar(Tensor self, Scalar other) -> Tensor")
                                 .shape(arithmetic_shape(false))
                                 .cpu(mul_kernel));
const OpRegistrar kDivTensor(define_op("div.Tensor(Tensor self, Tensor other) -> Tensor")
                                 .shape(arithmetic_shape(true))
                                 .cpu(div_kernel));
const OpRegistrar kDivScalar(define_op("div.Scalar(Tensor self, Scalar other) -> Tensor")
                                 .shape(arithmetic_shape(true))
                                 .cpu(div_kernel));
const OpRegistrar kDivTensorMode(
    define_op("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor")
        .shape(div_mode_shape())
        .cpu(div_kernel));

const OpHandle kAddT("add.Tensor"), kAddS("add.Scalar"), kSubT("sub.Tensor"), kSubS("sub.Scalar"),
    kMulT("mul.Tensor"), kMulS("mul.Scalar"), kDivT("div.Tensor"), kDivS("div.Scalar"),
    kDivMode("div.Tensor_mode");

}  // namespace

Tensor add(const Tensor& s, const Tensor& o, Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kAddT({s, o, alpha})[0];
}
Tensor add(const Tensor& s, Scalar o, Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kAddS({s, o, alpha})[0];
}
Tensor sub(const Tensor& s, const Tensor& o, Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kSubT({s, o, alpha})[0];
}
Tensor sub(const Tensor& s, Scalar o, Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kSubS({s, o, alpha})[0];
}
Tensor mul(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kMulT({s, o})[0];
}
Tensor mul(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kMulS({s, o})[0];
}
Tensor div(const Tensor& s, const Tensor& o, std::optional<std::string> mode, std::source_location where) {
  CallSiteScope call_site(where);
  if (!mode) return kDivT({s, o})[0];
  return kDivMode({s, o, *mode})[0];
}
Tensor div(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kDivS({s, o})[0];
}

}  // namespace ingot
