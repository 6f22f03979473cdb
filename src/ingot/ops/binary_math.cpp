// Binary pointwise ops beyond add / sub / mul / div (arithmetic.cpp): remainder and fmod,
// maximum / minimum, atan2 and hypot, bitwise and / or / xor, logical_xor, and div with a
// number and a rounding mode. Operands are broadcast and promoted by torch's rules
// (result_type); each kernel computes in opmath_t of the result dtype.
#include <cmath>
#include <numbers>

#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

DType promoted(const OpArgs& a) {
  std::array<Value, 2> operands{a[0], a[1]};
  return result_type(operands);
}

// --- remainder / fmod ---------------------------------------------------------------------

// Integer division by zero is an error, as in torch ("ZeroDivisionError").
template <typename M>
void check_divisor(M v, const std::string& op) {
  if constexpr (std::is_integral_v<M>) {
    INGOT_CHECK(v != M(0), ValueError, "[{}] integer division by zero (an element of 'other' is 0)",
                op);
  }
}

// remainder: Python's modulo, the result takes the divisor's sign. fmod: C's, the
// result takes the dividend's sign. Bool operands are rejected by both, as in torch.
template <bool kPython>
CpuKernel modulo_kernel() {
  return [](const OpArgs& a, std::span<const Tensor> out) {
    const DType t = out[0].dtype();
    const Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
    const std::string& name = a.name();
    INGOT_DISPATCH_NUMERIC_TYPES(t, name, [&]<typename T>() {
      binary_loop<T>(out[0], x, y, [&name](auto u, auto v) {
        using M = decltype(u);
        check_divisor(v, name);
        M r;
        if constexpr (std::is_floating_point_v<M>)
          r = std::fmod(u, v);
        else if constexpr (std::is_signed_v<M>)
          r = (v == M(-1)) ? M(0) : M(u % v);  // INT_MIN % -1
        else
          r = M(u % v);
        if constexpr (kPython && !std::is_unsigned_v<M>) {
          if (r != M(0) && ((r < M(0)) != (v < M(0)))) r = M(r + v);
        }
        return r;
      });
    });
  };
}

const OpHandle kDivMode("div.Tensor_mode"), kMulT("mul.Tensor"), kSubT("sub.Tensor"),
    kAddS("add.Scalar"), kFullOp("full"), kToCopy("_to_copy"), kNeT("ne.Tensor"),
    kLogicalAnd("logical_and"), kLogicalOr("logical_or");

// Operand i as a tensor of dtype t: a number as a 0-d tensor made by ops (`full`, plus
// add.Scalar for a symbolic size), so a trace records it, not a captured constant.
Tensor operand_tensor(const OpArgs& a, size_t i, DType t) {
  if (a[i].is(Value::Kind::Tensor)) return kToCopy({a.tensor(i), t})[0];
  if (a[i].is(Value::Kind::Int) && !a[i].sym_int().maybe_int()) {
    const Tensor zero = kFullOp({SymIntList{}, Scalar(int64_t(0)), t})[0];
    return kAddS({zero, a[i]})[0];
  }
  return kFullOp({SymIntList{}, a[i], t})[0];
}

// For exporters: self - other * div(self, other, mode) (floor: remainder, trunc: fmod),
// in the result dtype. Equal to the kernels up to float rounding.
Decomposition modulo_decomposition(const char* mode) {
  return [mode](const OpArgs& a) {
    const DType t = result_type(std::array<Value, 2>{a[0], a[1]});
    const Tensor x = operand_tensor(a, 0, t), y = operand_tensor(a, 1, t);
    const Tensor q = kDivMode({x, y, std::string(mode)})[0];
    return kSubT({x, kMulT({y, q})[0]});
  };
}

std::vector<OutputMeta> numeric_binary_shape(const OpArgs& a) {
  const DType t = promoted(a);
  INGOT_CHECK(t != DType::Bool, DTypeError,
              "[{}] bool operands are not supported; convert them to a numeric dtype first",
              a.name());
  return {{t, broadcast_args(a)}};
}

const OpRegistrar kRemainderTensor(
    define_op("remainder.Tensor(Tensor self, Tensor other) -> Tensor")
        .shape(numeric_binary_shape)
        .cpu(modulo_kernel<true>())
        .decompose(modulo_decomposition("floor")));
const OpRegistrar kRemainderScalar(
    define_op("remainder.Scalar(Tensor self, Scalar other) -> Tensor")
        .shape(numeric_binary_shape)
        .cpu(modulo_kernel<true>())
        .decompose(modulo_decomposition("floor")));
const OpRegistrar kFmodTensor(define_op("fmod.Tensor(Tensor self, Tensor other) -> Tensor")
                                  .shape(numeric_binary_shape)
                                  .cpu(modulo_kernel<false>())
                                  .decompose(modulo_decomposition("trunc")));
const OpRegistrar kFmodScalar(define_op("fmod.Scalar(Tensor self, Scalar other) -> Tensor")
                                  .shape(numeric_binary_shape)
                                  .cpu(modulo_kernel<false>())
                                  .decompose(modulo_decomposition("trunc")));

// --- maximum / minimum: NaN from either side propagates; bool is or / and ------------

template <bool kMax>
void extreme_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const DType t = out[0].dtype();
  const Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
  INGOT_DISPATCH_ALL_TYPES(t, a.name(), [&]<typename T>() {
    binary_loop<T>(out[0], x, y, [](auto u, auto v) {
      using M = decltype(u);
      if constexpr (std::is_floating_point_v<M>) {
        if (std::isnan(u) || std::isnan(v)) return u + v;
      }
      return kMax ? (u < v ? v : u) : (v < u ? v : u);
    });
  });
}

const OpHandle kWhere("where.self"), kIsnan("isnan"), kLtT("lt.Tensor"), kGtT("gt.Tensor"),
    kLogicalNot("logical_not");

// For exporters: where(isnan(other), other, where(self < other, other, self)) (max; > for
// min), so NaN on either side wins as in the kernel; bool: or / and.
template <bool kMax>
std::vector<Tensor> extreme_decomposition(const OpArgs& a) {
  const DType t = promoted(a);
  const Tensor x = operand_tensor(a, 0, t), y = operand_tensor(a, 1, t);
  if (t == DType::Bool) return (kMax ? kLogicalOr : kLogicalAnd)({x, y});
  const Tensor pick = kWhere({(kMax ? kLtT : kGtT)({x, y})[0], y, x})[0];
  if (!is_floating(t)) return {pick};
  return kWhere({kIsnan({y})[0], y, pick});
}

const OpRegistrar kMaximum(define_op("maximum(Tensor self, Tensor other) -> Tensor")
                               .shape([](const OpArgs& a) {
                                 return std::vector<OutputMeta>{{promoted(a), broadcast_args(a)}};
                               })
                               .cpu(extreme_kernel<true>)
                               .decompose(extreme_decomposition<true>));
const OpRegistrar kMinimum(define_op("minimum(Tensor self, Tensor other) -> Tensor")
                               .shape([](const OpArgs& a) {
                                 return std::vector<OutputMeta>{{promoted(a), broadcast_args(a)}};
                               })
                               .cpu(extreme_kernel<false>)
                               .decompose(extreme_decomposition<false>));

// --- atan2 / hypot ---------------------------------------------------------------------

// atan2 promotes integers to float32 (a "float op"); hypot takes floating inputs only.
const OpRegistrar kAtan2(
    define_op("atan2(Tensor self, Tensor other) -> Tensor")
        .shape([](const OpArgs& a) {
          const DType t = promoted(a);
          return std::vector<OutputMeta>{{is_floating(t) ? t : DType::F32, broadcast_args(a)}};
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const DType t = out[0].dtype();
          const Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
          INGOT_DISPATCH_FLOATING_TYPES(t, a.name(), [&]<typename T>() {
            binary_loop<T>(out[0], x, y, [](auto u, auto v) { return std::atan2(u, v); });
          });
        })
        // For exporters (ONNX has no Atan2): atan(self / other), moved by +-pi when other
        // < 0, and 0 for 0 / 0 (equal to the kernel except for the signs of zeros).
        .decompose([](const OpArgs& a) {
          static const OpHandle kAtan("atan"), kDiv("div.Tensor"), kLtS("lt.Scalar"),
              kGeS("ge.Scalar"), kEqS("eq.Scalar"), kAddT("add.Tensor");
          const DType t = is_floating(promoted(a)) ? promoted(a) : DType::F32;
          const Tensor y = operand_tensor(a, 0, t), x = operand_tensor(a, 1, t);
          const Tensor base = kAtan({kDiv({y, x})[0]})[0];
          const Tensor pi = kFullOp({SymIntList{}, Scalar(std::numbers::pi), t})[0];
          const Tensor minus_pi = kFullOp({SymIntList{}, Scalar(-std::numbers::pi), t})[0];
          const Tensor zero = kFullOp({SymIntList{}, Scalar(int64_t(0)), t})[0];
          const Tensor shift = kWhere({kGeS({y, Scalar(int64_t(0))})[0], pi, minus_pi})[0];
          const Tensor moved =
              kWhere({kLtS({x, Scalar(int64_t(0))})[0], kAddT({base, shift})[0], base})[0];
          const Tensor origin =
              kLogicalAnd({kEqS({x, Scalar(int64_t(0))})[0], kEqS({y, Scalar(int64_t(0))})[0]})[0];
          return kWhere({origin, zero, moved});
        }));
const OpRegistrar kHypot(
    define_op("hypot(Tensor self, Tensor other) -> Tensor")
        .shape([](const OpArgs& a) {
          const DType t = promoted(a);
          INGOT_CHECK(is_floating(t), DTypeError, "[{}] floating operands are required, got {}",
                      a.name(), t);
          return std::vector<OutputMeta>{{t, broadcast_args(a)}};
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const DType t = out[0].dtype();
          const Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
          INGOT_DISPATCH_FLOATING_TYPES(t, a.name(), [&]<typename T>() {
            binary_loop<T>(out[0], x, y, [](auto u, auto v) { return std::hypot(u, v); });
          });
        })
        // For exporters: sqrt(x^2 + y^2) (the kernel avoids overflow for huge values).
        .decompose([](const OpArgs& a) {
          static const OpHandle kSqrt("sqrt"), kAddT("add.Tensor");
          const DType t = promoted(a);
          const Tensor x = operand_tensor(a, 0, t), y = operand_tensor(a, 1, t);
          return kSqrt({kAddT({kMulT({x, x})[0], kMulT({y, y})[0]})[0]});
        }));

// --- bitwise and / or / xor, logical_xor -------------------------------------------------

std::vector<OutputMeta> bitwise_shape(const OpArgs& a) {
  const DType t = promoted(a);
  INGOT_CHECK(!is_floating(t), DTypeError,
              "[{}] integer or bool operands are required, got {} (a float operand promotes "
              "the pair to a floating dtype)",
              a.name(), t);
  return {{t, broadcast_args(a)}};
}

template <typename F>
CpuKernel bitwise_kernel(F f) {
  return [f](const OpArgs& a, std::span<const Tensor> out) {
    const DType t = out[0].dtype();
    const Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
    INGOT_DISPATCH_ALL_TYPES(t, a.name(), [&]<typename T>() {
      if constexpr (std::is_integral_v<T>)
        cpu::elementwise<T, T, T>(out[0], {&x, &y}, [f](T u, T v) { return T(f(u, v)); });
    });
  };
}

// For exporters: on bool, the logical op every backend translates (masks combined with
// `&` in attention code); integer operands have no translation yet.
Decomposition bool_bitwise_decomposition(const OpHandle& logical) {
  return [&logical](const OpArgs& a) {
    const DType t = result_type(std::array<Value, 2>{a[0], a[1]});
    INGOT_CHECK(t == DType::Bool, NotSupportedError,
                "[{}] on {} operands has no exporter translation (only bool operands, as "
                "logical ops); keep the op in the runtime or compute it on bool masks",
                a.name(), t);
    return logical({operand_tensor(a, 0, t), operand_tensor(a, 1, t)});
  };
}

template <typename F>
void register_bitwise(const char* name, F f, const OpHandle& logical) {
  OpRegistry::instance().add(
      define_op(fmt::format("bitwise_{}.Tensor(Tensor self, Tensor other) -> Tensor", name))
          .shape(bitwise_shape)
          .cpu(bitwise_kernel(f))
          .decompose(bool_bitwise_decomposition(logical)));
  OpRegistry::instance().add(
      define_op(fmt::format("bitwise_{}.Scalar(Tensor self, Scalar other) -> Tensor", name))
          .shape(bitwise_shape)
          .cpu(bitwise_kernel(f))
          .decompose(bool_bitwise_decomposition(logical)));
}

const bool kBitwiseRegistered = [] {
  register_bitwise(
      "and", [](auto u, auto v) { return u & v; }, kLogicalAnd);
  register_bitwise(
      "or", [](auto u, auto v) { return u | v; }, kLogicalOr);
  register_bitwise(
      "xor", [](auto u, auto v) { return u ^ v; }, kNeT);
  return true;
}();

const OpRegistrar kLogicalXor(
    define_op("logical_xor(Tensor self, Tensor other) -> Tensor")
        .shape([](const OpArgs& a) {
          return std::vector<OutputMeta>{{DType::Bool, broadcast_args(a)}};
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const Tensor x = to(a.tensor(0), DType::Bool), y = to(a.tensor(1), DType::Bool);
          cpu::elementwise<bool, bool, bool>(out[0], {&x, &y},
                                             [](bool u, bool v) { return u != v; });
        })
        .decompose([](const OpArgs& a) {
          return kNeT(
              {kToCopy({a.tensor(0), DType::Bool})[0], kToCopy({a.tensor(1), DType::Bool})[0]});
        }));

// --- div.Scalar_mode: div.Tensor_mode with the number as a 0-d tensor (div.Scalar without
// a rounding mode); a decomposition only, so every backend has it --------------------

const OpHandle kDivScalar("div.Scalar");

const OpRegistrar kDivScalarMode(
    define_op("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor")
        .shape([](const OpArgs& a) {
          std::array<Value, 2> operands{a[0], a[1]};
          DType t = result_type(operands);
          if (a[2].is_none() && !is_floating(t)) t = DType::F32;
          return std::vector<OutputMeta>{{t, a.tensor(0).sym_sizes()}};
        })
        .decompose([](const OpArgs& a) {
          if (a[2].is_none()) return kDivScalar({a.tensor(0), a[1]});
          const Tensor other = operand_tensor(a, 1, promoted(a));
          return kDivMode({a.tensor(0), other, a[2]});
        }));

}  // namespace
}  // namespace ingot
