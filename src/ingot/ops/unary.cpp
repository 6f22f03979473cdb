// Unary pointwise ops: neg / abs / relu keep the input dtype; float math promotes
// integer and bool inputs to float32 (torch's "unary float op" rule); silu and gelu
// accept floating inputs only, as torch's kernels do. 16-bit floats compute in float.
#include <cmath>
#include <numbers>

#include "ingot/ops/cpu/activation.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/unary.h"

namespace ingot {
namespace {

std::vector<OutputMeta> same_dtype_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  return {{x.dtype(), x.sym_sizes()}};
}

// --- ops that keep the dtype ----------------------------------------------------------

ShapeFn keep_dtype_shape(bool allow_bool, const char* bool_hint) {
  return [allow_bool, bool_hint](const OpArgs& a) {
    INGOT_CHECK(allow_bool || a.tensor(0).dtype() != DType::Bool, DTypeError,
                "[{}] bool tensors are not supported; {}", a.name(), bool_hint);
    return same_dtype_shape(a);
  };
}

template <typename F>
CpuKernel keep_dtype_kernel(F f) {
  return [f](const OpArgs& a, std::span<const Tensor> out) {
    const Tensor& x = a.tensor(0);
    if (x.dtype() == DType::Bool) {  // abs of bool is the identity
      cpu::elementwise<bool, bool>(out[0], {&x}, [](bool v) { return v; });
      return;
    }
    INGOT_DISPATCH_NUMERIC_TYPES(x.dtype(), a.name(),
                                 [&]<typename T>() { unary_loop<T>(out[0], x, f); });
  };
}

const OpRegistrar kNeg(
    define_op("neg(Tensor self) -> Tensor")
        .shape(keep_dtype_shape(false, "to invert a mask use logical_not"))
        .cpu(keep_dtype_kernel([](auto v) { return -v; })));

const OpRegistrar kAbs(define_op("abs(Tensor self) -> Tensor")
                           .shape(keep_dtype_shape(true, ""))
                           .cpu(keep_dtype_kernel([](auto v) {
                             using M = decltype(v);
                             if constexpr (std::is_unsigned_v<M>) return v;
                             else if constexpr (std::is_floating_point_v<M>) return std::abs(v);
                             else return v < 0 ? M(-v) : v;
                           })));

// relu keeps NaN (NaN < 0 is false), like torch's clamp_min(self, 0).
const OpRegistrar kRelu(
    define_op("relu(Tensor self) -> Tensor")
        .shape(keep_dtype_shape(false, "convert the input to a numeric dtype first"))
        .cpu(keep_dtype_kernel([](auto v) {
          using M = decltype(v);
          if constexpr (std::is_unsigned_v<M>) return v;
          else return v < M(0) ? M(0) : v;
        })));

// --- float math -------------------------------------------------------------------------

// Floating inputs keep their dtype; integer and bool inputs give float32.
std::vector<OutputMeta> float_math_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  return {{is_floating(x.dtype()) ? x.dtype() : DType::F32, x.sym_sizes()}};
}

// Floating inputs only (silu, gelu).
std::vector<OutputMeta> floating_only_shape(const OpArgs& a) {
  check_floating(a.tensor(0), a.name(), "self");
  return same_dtype_shape(a);
}

// f is a generic callable over the op-math type (float or double).
template <typename F>
CpuKernel float_kernel(F f) {
  return [f](const OpArgs& a, std::span<const Tensor> out) {
    const DType t = out[0].dtype();
    const Tensor x = to(a.tensor(0), t);
    INGOT_DISPATCH_FLOATING_TYPES(t, a.name(), [&]<typename T>() { unary_loop<T>(out[0], x, f); });
  };
}

template <typename F>
OpDef float_math_op(std::string_view schema, F f) {
  return define_op(schema).shape(float_math_shape).cpu(float_kernel(f));
}

template <typename M>
M sigmoid_of(M v) {
  return M(1) / (M(1) + std::exp(-v));
}

const OpRegistrar kSqrt(float_math_op("sqrt(Tensor self) -> Tensor", [](auto v) { return std::sqrt(v); }));
const OpRegistrar kRsqrt(float_math_op("rsqrt(Tensor self) -> Tensor", [](auto v) {
  return decltype(v)(1) / std::sqrt(v);
}));
const OpRegistrar kExp(float_math_op("exp(Tensor self) -> Tensor", [](auto v) { return std::exp(v); }));
const OpRegistrar kLog(float_math_op("log(Tensor self) -> Tensor", [](auto v) { return std::log(v); }));
const OpRegistrar kSin(float_math_op("sin(Tensor self) -> Tensor", [](auto v) { return std::sin(v); }));
const OpRegistrar kCos(float_math_op("cos(Tensor self) -> Tensor", [](auto v) { return std::cos(v); }));
const OpRegistrar kTanh(float_math_op("tanh(Tensor self) -> Tensor", [](auto v) { return std::tanh(v); }));
const OpRegistrar kSigmoid(
    float_math_op("sigmoid(Tensor self) -> Tensor", [](auto v) { return sigmoid_of(v); }));

// The rest of torch's float math (core ATen): same promotion rule as above.
const OpRegistrar kTan(float_math_op("tan(Tensor self) -> Tensor",
                                     [](auto v) { return std::tan(v); }));
const OpRegistrar kAsin(float_math_op("asin(Tensor self) -> Tensor",
                                      [](auto v) { return std::asin(v); }));
const OpRegistrar kAcos(float_math_op("acos(Tensor self) -> Tensor",
                                      [](auto v) { return std::acos(v); }));
const OpRegistrar kAtan(float_math_op("atan(Tensor self) -> Tensor",
                                      [](auto v) { return std::atan(v); }));
const OpRegistrar kSinh(float_math_op("sinh(Tensor self) -> Tensor",
                                      [](auto v) { return std::sinh(v); }));
const OpRegistrar kCosh(float_math_op("cosh(Tensor self) -> Tensor",
                                      [](auto v) { return std::cosh(v); }));
const OpRegistrar kAsinh(float_math_op("asinh(Tensor self) -> Tensor",
                                       [](auto v) { return std::asinh(v); }));
const OpRegistrar kAcosh(float_math_op("acosh(Tensor self) -> Tensor",
                                       [](auto v) { return std::acosh(v); }));
const OpRegistrar kAtanh(float_math_op("atanh(Tensor self) -> Tensor",
                                       [](auto v) { return std::atanh(v); }));
const OpRegistrar kErf(float_math_op("erf(Tensor self) -> Tensor",
                                     [](auto v) { return std::erf(v); }));

// For exporters without these ops: exp / log with a constant (exact to float rounding;
// the kernels keep expm1 / log1p's accuracy near 0).
const OpHandle kExpH("exp"), kLogH("log"), kSubSH("sub.Scalar"), kAddSH("add.Scalar"),
    kMulSH("mul.Scalar"), kToCopyH("_to_copy");

Tensor float_operand(const Tensor& x) {
  return is_floating(x.dtype()) ? x : kToCopyH({x, DType::F32})[0];
}

const OpRegistrar kExpm1(float_math_op("expm1(Tensor self) -> Tensor", [](auto v) {
                           return std::expm1(v);
                         }).decompose([](const OpArgs& a) {
  return kSubSH({kExpH({float_operand(a.tensor(0))})[0], Scalar(int64_t(1))});
}));
const OpRegistrar kLog1p(float_math_op("log1p(Tensor self) -> Tensor", [](auto v) {
                           return std::log1p(v);
                         }).decompose([](const OpArgs& a) {
  return kLogH({kAddSH({float_operand(a.tensor(0)), Scalar(int64_t(1))})[0]});
}));
const OpRegistrar kLog2(float_math_op("log2(Tensor self) -> Tensor", [](auto v) {
                          return std::log2(v);
                        }).decompose([](const OpArgs& a) {
  return kMulSH({kLogH({a.tensor(0)})[0], Scalar(1.0 / std::numbers::ln2)});
}));
const OpRegistrar kLog10(float_math_op("log10(Tensor self) -> Tensor", [](auto v) {
                           return std::log10(v);
                         }).decompose([](const OpArgs& a) {
  return kMulSH({kLogH({a.tensor(0)})[0], Scalar(1.0 / std::numbers::ln10)});
}));

// --- rounding, sign, bitwise_not: the dtype is kept -------------------------------------

// ceil / floor / round / trunc: integers are already whole (identity), as in torch; bool
// is rejected. round is half-to-even (torch.round), which nearbyint gives in the default
// rounding mode.
template <typename F>
OpDef rounding_op(std::string_view schema, F f) {
  return define_op(schema)
      .shape(keep_dtype_shape(false, "convert the input to a numeric dtype first"))
      .cpu([f](const OpArgs& a, std::span<const Tensor> out) {
        const Tensor& x = a.tensor(0);
        INGOT_DISPATCH_NUMERIC_TYPES(x.dtype(), a.name(), [&]<typename T>() {
          using M = opmath_t<T>;
          if constexpr (std::is_floating_point_v<M>)
            unary_loop<T>(out[0], x, f);
          else
            unary_loop<T>(out[0], x, [](M v) { return v; });
        });
      });
}

const OpRegistrar kCeil(rounding_op("ceil(Tensor self) -> Tensor",
                                    [](auto v) { return std::ceil(v); }));
const OpRegistrar kFloor(rounding_op("floor(Tensor self) -> Tensor",
                                     [](auto v) { return std::floor(v); }));
// For exporters: trunc(x) = sign(x) * floor(|x|) (integers: the identity).
const OpRegistrar kTrunc(rounding_op("trunc(Tensor self) -> Tensor", [](auto v) {
                           return std::trunc(v);
                         }).decompose([](const OpArgs& a) {
  static const OpHandle kSignH("sign"), kFloorH("floor"), kAbsH("abs"), kMulH("mul.Tensor"),
      kCloneH("clone");
  const Tensor& x = a.tensor(0);
  if (!is_floating(x.dtype())) return kCloneH({x});
  return kMulH({kSignH({x})[0], kFloorH({kAbsH({x})[0]})[0]});
}));
const OpRegistrar kRound(rounding_op("round(Tensor self) -> Tensor",
                                     [](auto v) { return std::nearbyint(v); }));

// sign: -1, 0 or 1 in the input's dtype (NaN stays NaN); bool is the identity.
const OpRegistrar kSign(define_op("sign(Tensor self) -> Tensor")
                            .shape(keep_dtype_shape(true, ""))
                            .cpu(keep_dtype_kernel([](auto v) {
                              using M = decltype(v);
                              if constexpr (std::is_floating_point_v<M>) {
                                if (std::isnan(v)) return v;
                              }
                              return M((M(0) < v) - (v < M(0)));
                            })));

// bitwise_not: ~x on integers, logical not on bool; floating inputs are an error.
const OpRegistrar kBitwiseNot(
    define_op("bitwise_not(Tensor self) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          INGOT_CHECK(!is_floating(x.dtype()), DTypeError,
                      "[{}] 'self' must be an integer or bool tensor, got {}", a.name(), x.dtype());
          return same_dtype_shape(a);
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const Tensor& x = a.tensor(0);
          if (x.dtype() == DType::Bool) {
            cpu::elementwise<bool, bool>(out[0], {&x}, [](bool v) { return !v; });
            return;
          }
          INGOT_DISPATCH_NUMERIC_TYPES(x.dtype(), a.name(), [&]<typename T>() {
            if constexpr (std::is_integral_v<T>)
              cpu::elementwise<T, T>(out[0], {&x}, [](T v) { return T(~v); });
          });
        })
        // For exporters: logical_not on bool, -x - 1 on signed integers (two's complement).
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          static const OpHandle kNot("logical_not"), kNegOp("neg"), kSubS("sub.Scalar");
          if (x.dtype() == DType::Bool) return kNot({x});
          INGOT_CHECK(x.dtype() != DType::U8, NotSupportedError,
                      "[{}] on uint8 has no exporter translation", a.name());
          return kSubS({kNegOp({x})[0], Scalar(int64_t(1))});
        }));

// silu: contiguous tensors through cpu::silu_mul (vectorised, threaded), strided ones
// element by element with the same formula x / (1 + exp(-x)).
const OpRegistrar kSilu(define_op("silu(Tensor self) -> Tensor")
                            .shape(floating_only_shape)
                            .cpu([](const OpArgs& a, std::span<const Tensor> out) {
                              const Tensor& x = a.tensor(0);
                              if (x.is_contiguous() && out[0].is_contiguous())
                                return cpu::silu_mul(out[0], x, Tensor());
                              float_kernel([](auto v) {
                                return v / (decltype(v)(1) + std::exp(-v));
                              })(a, out);
                            }));

const OpRegistrar kGelu(
    define_op("gelu(Tensor self, *, str approximate='none') -> Tensor")
        .shape([](const OpArgs& a) {
          const std::string& mode = a.string(1);
          INGOT_CHECK(mode == "none" || mode == "tanh", ValueError,
                      "[{}] approximate must be 'none' or 'tanh', got '{}'", a.name(), mode);
          return floating_only_shape(a);
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          if (a.string(1) == "tanh") {
            float_kernel([](auto v) {
              using M = decltype(v);
              const M k = M(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
              return M(0.5) * v * (M(1) + std::tanh(k * (v + M(0.044715) * v * v * v)));
            })(a, out);
          } else {
            float_kernel([](auto v) {
              using M = decltype(v);
              return M(0.5) * v * (M(1) + std::erf(v * M(std::numbers::sqrt2 / 2)));
            })(a, out);
          }
        }));

const OpHandle kNegOp("neg"), kAbsOp("abs"), kReluOp("relu"), kSqrtOp("sqrt"), kRsqrtOp("rsqrt"),
    kExpOp("exp"), kLogOp("log"), kSinOp("sin"), kCosOp("cos"), kTanhOp("tanh"),
    kSigmoidOp("sigmoid"), kSiluOp("silu"), kGeluOp("gelu");

}  // namespace

Tensor neg(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kNegOp({t})[0];
}
Tensor abs(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kAbsOp({t})[0];
}
Tensor relu(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kReluOp({t})[0];
}
Tensor sqrt(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kSqrtOp({t})[0];
}
Tensor rsqrt(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kRsqrtOp({t})[0];
}
Tensor exp(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kExpOp({t})[0];
}
Tensor log(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kLogOp({t})[0];
}
Tensor sin(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kSinOp({t})[0];
}
Tensor cos(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kCosOp({t})[0];
}
Tensor tanh(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kTanhOp({t})[0];
}
Tensor sigmoid(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kSigmoidOp({t})[0];
}
Tensor silu(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kSiluOp({t})[0];
}
Tensor gelu(const Tensor& t, std::string approximate, std::source_location where) {
  CallSiteScope call_site(where);
  return kGeluOp({t, std::move(approximate)})[0];
}

}  // namespace ingot
