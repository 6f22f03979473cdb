// Activations of torch's core ATen opset that ingot composes from other ops (no kernel of
// their own): hardtanh (clamp), leaky_relu and elu (where over the sign); and the one-sided
// clamps of the training dialect (clamp_min / clamp_max, Scalar and Tensor bounds). The runtime
// runs the decomposition and exporters see its ops (composite_shape.cpp says how).
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

const OpHandle kClamp("clamp"), kGt("gt.Scalar"), kWhere("where.self"), kMulS("mul.Scalar"),
    kExp("exp"), kSubS("sub.Scalar");

std::vector<OutputMeta> floating_same(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  INGOT_CHECK(is_floating(x.dtype()) || a.op().schema.name == "hardtanh", DTypeError,
              "[{}] 'self' must be floating, got {}", a.name(), x.dtype());
  INGOT_CHECK(x.dtype() != DType::Bool, DTypeError, "[{}] bool tensors are not supported",
              a.name());
  return {{x.dtype(), x.sym_sizes()}};
}

const OpRegistrar kHardtanh(
    define_op("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor")
        .shape(floating_same)
        .decompose([](const OpArgs& a) {
          return kClamp({a.tensor(0), a[1], a[2]});
        }));

// x > 0 ? x : x * negative_slope
const OpRegistrar kLeakyRelu(
    define_op("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor")
        .shape(floating_same)
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          return kWhere({kGt({x, Scalar(int64_t(0))})[0], x, kMulS({x, a[1]})[0]});
        }));

// x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1)
const OpRegistrar kElu(
    define_op("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor")
        .shape(floating_same)
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const Tensor expm1 = kSubS({kExp({kMulS({x, a[3]})[0]})[0], Scalar(int64_t(1))})[0];
          const Tensor neg = kMulS({kMulS({expm1, a[1]})[0], a[2]})[0];
          return kWhere({kGt({x, Scalar(int64_t(0))})[0], kMulS({x, a[2]})[0], neg});
        }));

const OpHandle kClampT("clamp.Tensor");

// clamp_min / clamp_max: clamp with one bound (its shape function checks the dtypes).
OpDef one_sided_clamp(std::string_view schema, bool is_min, bool tensor_bound) {
  const OpHandle& clamp = tensor_bound ? kClampT : kClamp;
  return define_op(schema)
      .shape([&clamp, is_min](const OpArgs& a) {
        const Value none;
        return clamp.def().shape_fn(
            normalize_args(clamp.def(), {a[0], is_min ? a[1] : none, is_min ? none : a[1]}));
      })
      .decompose([&clamp, is_min](const OpArgs& a) {
        return clamp({a[0], is_min ? a[1] : Value(), is_min ? Value() : a[1]});
      });
}

const OpRegistrar kClampMin(one_sided_clamp("clamp_min(Tensor self, Scalar min) -> Tensor", true,
                                            false));
const OpRegistrar kClampMax(one_sided_clamp("clamp_max(Tensor self, Scalar max) -> Tensor", false,
                                            false));
const OpRegistrar kClampMinT(one_sided_clamp("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor",
                                             true, true));
const OpRegistrar kClampMaxT(one_sided_clamp("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor",
                                             false, true));

}  // namespace
}  // namespace ingot
