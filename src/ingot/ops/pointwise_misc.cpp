// Pointwise ops beyond plain arithmetic: where, masked_fill, clamp, pow.
#include <cmath>

#include "ingot/ops/registry.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/comparison.h"
#include "ingot/ops/functional/unary.h"

namespace ingot {
namespace {

void check_bool_mask(const Tensor& mask, std::string_view op, std::string_view arg) {
  INGOT_CHECK(mask.dtype() == DType::Bool, DTypeError,
              "[{}] '{}' must be a bool tensor, got {}; build it with a comparison or "
              "convert it with to(mask, bool)",
              op, arg, mask.dtype());
}

// --- where.self ------------------------------------------------------------------------

const OpRegistrar kWhere(
    define_op("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor &c = a.tensor(0), &x = a.tensor(1), &y = a.tensor(2);
          check_bool_mask(c, a.name(), "condition");
          std::array<Value, 2> operands{x, y};
          Shape s = broadcast_shapes(broadcast_shapes(c.sym_sizes(), x.sym_sizes(), a.name()),
                                     y.sym_sizes(), a.name());
          return std::vector<OutputMeta>{{result_type(operands), std::move(s)}};
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const DType t = out[0].dtype();
          const Tensor& c = a.tensor(0);
          const Tensor x = to(a.tensor(1), t), y = to(a.tensor(2), t);
          INGOT_DISPATCH_ALL_TYPES(t, a.name(), [&]<typename T>() {
            cpu::elementwise<T, bool, T, T>(out[0], {&c, &x, &y},
                                            [](bool m, T u, T v) { return m ? u : v; });
          });
        }));

// --- masked_fill -------------------------------------------------------------------------

std::vector<OutputMeta> masked_fill_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &mask = a.tensor(1);
  check_bool_mask(mask, a.name(), "mask");
  if (a[2].is(Value::Kind::Tensor)) {
    const Tensor& v = a.tensor(2);
    INGOT_CHECK(v.dim() == 0, ShapeError,
                "[{}] 'value' must be a 0-dim tensor, got shape {}; pass a Scalar or "
                "reshape the value to []",
                a.name(), v.shape_string());
  }
  return {{x.dtype(), broadcast_shapes(x.sym_sizes(), mask.sym_sizes(), a.name())}};
}

void masked_fill_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor &x = a.tensor(0), &mask = a.tensor(1);
  const DType t = x.dtype();
  // The fill value as a 0-d tensor of self's dtype.
  const Tensor value = a[2].is(Value::Kind::Tensor) ? to(a.tensor(2), t)
                                                     : scalar_tensor(a.scalar(2), t);
  INGOT_DISPATCH_ALL_TYPES(t, a.name(), [&]<typename T>() {
    const T v = *static_cast<const T*>(value.raw_data());
    cpu::elementwise<T, T, bool>(out[0], {&x, &mask}, [v](T u, bool m) { return m ? v : u; });
  });
}

const OpRegistrar kMaskedFillScalar(
    define_op("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor")
        .shape(masked_fill_shape)
        .cpu(masked_fill_kernel));
const OpRegistrar kMaskedFillTensor(
    define_op("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor")
        .shape(masked_fill_shape)
        .cpu(masked_fill_kernel));

// --- clamp -----------------------------------------------------------------------------

// max(u, lo) and min(u, hi) that propagate NaN from either side (torch.maximum/minimum).
template <typename M>
M max_nan(M u, M lo) {
  if constexpr (std::is_floating_point_v<M>) {
    if (std::isnan(u) || std::isnan(lo)) return u + lo;
  }
  return u < lo ? lo : u;
}
template <typename M>
M min_nan(M u, M hi) {
  if constexpr (std::is_floating_point_v<M>) {
    if (std::isnan(u) || std::isnan(hi)) return u + hi;
  }
  return u > hi ? hi : u;
}

// Bounds are positions 1 and 2 (Scalar? or Tensor?); the dtype is promoted over all.
std::vector<OutputMeta> clamp_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  INGOT_CHECK(!a[1].is_none() || !a[2].is_none(), ValueError,
              "[{}] at least one of 'min' and 'max' must be given", a.name());
  std::vector<Value> operands{x};
  Shape s = x.sym_sizes();
  for (size_t i : {1, 2}) {
    if (a[i].is_none()) continue;
    operands.push_back(a[i]);
    if (a[i].is(Value::Kind::Tensor)) s = broadcast_shapes(s, a.tensor(i).sym_sizes(), a.name());
  }
  const DType t = result_type(operands);
  INGOT_CHECK(t != DType::Bool, DTypeError,
              "[{}] bool tensors are not supported; convert to a numeric dtype first", a.name());
  return {{t, std::move(s)}};
}

void clamp_scalar_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const DType t = out[0].dtype();
  const Tensor x = to(a.tensor(0), t);
  const std::optional<Scalar> lo_s = a.optional_scalar(1), hi_s = a.optional_scalar(2);
  INGOT_DISPATCH_NUMERIC_TYPES(t, a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    const M lo = lo_s ? lo_s->to<M>() : M(0), hi = hi_s ? hi_s->to<M>() : M(0);
    if (lo_s && hi_s) unary_loop<T>(out[0], x, [lo, hi](M u) { return min_nan(max_nan(u, lo), hi); });
    else if (lo_s) unary_loop<T>(out[0], x, [lo](M u) { return max_nan(u, lo); });
    else unary_loop<T>(out[0], x, [hi](M u) { return min_nan(u, hi); });
  });
}

void clamp_tensor_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const DType t = out[0].dtype();
  const Tensor x = to(a.tensor(0), t);
  const Tensor lo_t = a.optional_tensor(1), hi_t = a.optional_tensor(2);
  INGOT_DISPATCH_NUMERIC_TYPES(t, a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    if (lo_t.defined() && hi_t.defined()) {
      const Tensor lo = to(lo_t, t), hi = to(hi_t, t);
      cpu::elementwise<T, T, T, T>(out[0], {&x, &lo, &hi}, [](T u, T l, T h) {
        return T(min_nan(max_nan(M(u), M(l)), M(h)));
      });
    } else if (lo_t.defined()) {
      binary_loop<T>(out[0], x, to(lo_t, t), [](M u, M l) { return max_nan(u, l); });
    } else {
      binary_loop<T>(out[0], x, to(hi_t, t), [](M u, M h) { return min_nan(u, h); });
    }
  });
}

const OpRegistrar kClamp(
    define_op("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor")
        .shape(clamp_shape)
        .cpu(clamp_scalar_kernel));
const OpRegistrar kClampTensor(
    define_op("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor")
        .shape(clamp_shape)
        .cpu(clamp_tensor_kernel));

// --- pow -------------------------------------------------------------------------------

// Integer power by squaring; negative exponents give 1, -1 or 0 like torch's powi.
template <typename M>
M int_pow(M base, M e) {
  if constexpr (std::is_signed_v<M>) {
    if (e < 0) {
      if (base == 1) return 1;
      if (base == -1) return (e % 2 == 0) ? M(1) : M(-1);
      return 0;
    }
  }
  M result = 1;
  while (e != 0) {
    if (e & 1) result = M(result * base);
    base = M(base * base);
    e = M(e / 2);
  }
  return result;
}

template <typename M>
M pow_of(M u, M v) {
  if constexpr (std::is_floating_point_v<M>) return std::pow(u, v);
  else return int_pow(u, v);
}

std::vector<OutputMeta> pow_shape(const OpArgs& a) {
  std::array<Value, 2> operands{a[0], a[1]};
  const DType t = result_type(operands);
  INGOT_CHECK(t != DType::Bool, DTypeError,
              "[{}] bool operands are not supported; convert them to a numeric dtype first",
              a.name());
  Shape s;
  if (a[0].is(Value::Kind::Tensor) && a[1].is(Value::Kind::Tensor)) s = broadcast_args(a);
  else s = a[0].is(Value::Kind::Tensor) ? a.tensor(0).sym_sizes() : a.tensor(1).sym_sizes();
  if (a[1].is(Value::Kind::Scalar)) {
    const Scalar& e = a.scalar(1);
    INGOT_CHECK(is_floating(t) || !e.is_integral() || e.to_int() >= 0, ValueError,
                "[{}] integers to negative integer powers are not allowed (exponent {}); "
                "convert self to a floating dtype first",
                a.name(), e.to_int());
  }
  return {{t, std::move(s)}};
}

// Tensor ** Scalar with fast paths for the exponents models use (x*x in RMSNorm).
void pow_tensor_scalar_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const DType t = out[0].dtype();
  const Tensor x = to(a.tensor(0), t);
  const Scalar& e = a.scalar(1);
  INGOT_DISPATCH_NUMERIC_TYPES(t, a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_floating_point_v<M>) {
      const M p = e.to<M>();
      if (p == M(2)) unary_loop<T>(out[0], x, [](M u) { return u * u; });
      else if (p == M(1)) unary_loop<T>(out[0], x, [](M u) { return u; });
      else if (p == M(0.5)) unary_loop<T>(out[0], x, [](M u) { return std::sqrt(u); });
      else if (p == M(-1)) unary_loop<T>(out[0], x, [](M u) { return M(1) / u; });
      else if (p == M(-0.5)) unary_loop<T>(out[0], x, [](M u) { return M(1) / std::sqrt(u); });
      else unary_loop<T>(out[0], x, [p](M u) { return std::pow(u, p); });
    } else {
      const M p = e.to<M>();
      unary_loop<T>(out[0], x, [p](M u) { return int_pow(u, p); });
    }
  });
}

void pow_binary_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const DType t = out[0].dtype();
  const Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
  INGOT_DISPATCH_NUMERIC_TYPES(t, a.name(), [&]<typename T>() {
    binary_loop<T>(out[0], x, y, [](auto u, auto v) { return pow_of(u, v); });
  });
}

const OpRegistrar kPowTensorScalar(
    define_op("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor")
        .shape(pow_shape)
        .cpu(pow_tensor_scalar_kernel));
const OpRegistrar kPowTensorTensor(
    define_op("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor")
        .shape(pow_shape)
        .cpu(pow_binary_kernel));
const OpRegistrar kPowScalar(define_op("pow.Scalar(Scalar self, Tensor exponent) -> Tensor")
                                 .shape(pow_shape)
                                 .cpu(pow_binary_kernel));

const OpHandle kWhereOp("where.self"), kMaskedFillS("masked_fill.Scalar"),
    kMaskedFillT("masked_fill.Tensor"), kClampOp("clamp"), kClampT("clamp.Tensor"),
    kPowTS("pow.Tensor_Scalar"), kPowTT("pow.Tensor_Tensor"), kPowS("pow.Scalar");

}  // namespace

Tensor where(const Tensor& c, const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kWhereOp({c, s, o})[0];
}
Tensor masked_fill(const Tensor& s, const Tensor& m, Scalar v, std::source_location where) {
  CallSiteScope call_site(where);
  return kMaskedFillS({s, m, v})[0];
}
Tensor masked_fill(const Tensor& s, const Tensor& m, const Tensor& v, std::source_location where) {
  CallSiteScope call_site(where);
  return kMaskedFillT({s, m, v})[0];
}
Tensor clamp(const Tensor& s, std::optional<Scalar> min, std::optional<Scalar> max, std::source_location where) {
  CallSiteScope call_site(where);
  return kClampOp({s, min, max})[0];
}
Tensor clamp(const Tensor& s, const Tensor& min, const Tensor& max, std::source_location where) {
  CallSiteScope call_site(where);
  return kClampT({s, min.defined() ? Value(min) : Value(), max.defined() ? Value(max) : Value()})[0];
}
Tensor pow(const Tensor& s, const Tensor& e, std::source_location where) {
  CallSiteScope call_site(where);
  return kPowTT({s, e})[0];
}
Tensor pow(const Tensor& s, Scalar e, std::source_location where) {
  CallSiteScope call_site(where);
  return kPowTS({s, e})[0];
}
Tensor pow(Scalar s, const Tensor& e, std::source_location where) {
  CallSiteScope call_site(where);
  return kPowS({s, e})[0];
}

}  // namespace ingot
