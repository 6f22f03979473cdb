// Reductions ingot composes from other ops (no kernel of their own): var / std / var_mean
// (two passes: the mean, then the mean square of the deviations, as torch's CPU kernel
// computes it in one Welford pass — equal within float rounding), max.dim / min.dim
// (amax / amin with argmax / argmin: the first index of the extreme, NaN winning) and
// logsumexp (shifted by the max, an infinite max shifted by 0 as torch does). Like
// composite_shape.cpp, the runtime runs the decomposition and exporters see its ops.
#include <algorithm>

#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

const OpHandle kMeanDim("mean.dim"), kSub("sub.Tensor"), kMul("mul.Tensor"),
    kSumDim("sum.dim_IntList"), kDivScalar("div.Scalar"), kSqrt("sqrt"), kAmax("amax"),
    kAmin("amin"), kArgmax("argmax"), kArgmin("argmin"), kToCopy("_to_copy"), kExp("exp"),
    kLog("log"), kAdd("add.Tensor"), kWhere("where.self"), kIsinf("isinf"), kFull("full"),
    kSqueezeDims("squeeze.dims");

Tensor call1(const OpHandle& op, std::vector<Value> values) {
  return op(std::move(values)).at(0);
}

// --- var / std ---------------------------------------------------------------------------

struct VarArgs {
  IntShape dims;  // wrapped; every dim when the argument is None or empty
  double correction = 1;
  bool keepdim = false;
};

// var.correction(self, dim, *, correction, keepdim) and var.dim(self, dim, unbiased,
// keepdim), and their std twins, read into one form.
VarArgs var_args(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  VarArgs v;
  if (!a[1].is_none()) {
    for (int64_t d : a.int_list(1)) v.dims.push_back(wrap_dim(d, x.dim(), a.name()));
  }
  if (v.dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) v.dims.push_back(d);
  }
  if (a.op().schema.overload == "correction") {
    if (auto c = a.optional_scalar(2)) v.correction = c->to_double();
  } else {
    v.correction = a.boolean(2) ? 1 : 0;
  }
  v.keepdim = a.boolean(3);
  return v;
}

std::vector<OutputMeta> var_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  INGOT_CHECK(is_floating(x.dtype()), DTypeError,
              "[{}] 'self' must be floating, got {}; convert it first", a.name(), x.dtype());
  const VarArgs v = var_args(a);
  Shape out;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool reduced = std::find(v.dims.begin(), v.dims.end(), d) != v.dims.end();
    if (!reduced)
      out.push_back(x.sym_size(d));
    else if (v.keepdim)
      out.push_back(1);
  }
  return {{x.dtype(), std::move(out)}};
}

// sum((x - mean)^2) / (N - correction); N - correction <= 0 gives inf or NaN, as torch.
Tensor variance(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const VarArgs v = var_args(a);
  const Tensor mean = call1(kMeanDim, {x, v.dims, true});
  const Tensor dev = call1(kSub, {x, mean});
  const Tensor squares = call1(kSumDim, {call1(kMul, {dev, dev}), v.dims, v.keepdim});
  SymInt n = 1;
  for (int64_t d : v.dims) n = n * x.sym_size(d);
  if (v.correction == 0) return call1(kDivScalar, {squares, Value(n)});
  if (auto c = n.maybe_int())
    return call1(kDivScalar, {squares, Scalar(double(*c) - v.correction)});
  INGOT_CHECK(v.correction == double(int64_t(v.correction)), NotSupportedError,
              "[{}] a fractional correction ({}) with a symbolic element count ({}) is not "
              "supported",
              a.name(), v.correction, n.str());
  return call1(kDivScalar, {squares, Value(n - int64_t(v.correction))});
}

const OpRegistrar kVarCorrection(
    define_op("var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
              "bool keepdim=False) -> Tensor")
        .shape(var_shape)
        .decompose([](const OpArgs& a) { return std::vector<Tensor>{variance(a)}; }));
const OpRegistrar kVarDim(
    define_op("var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor")
        .shape(var_shape)
        .decompose([](const OpArgs& a) { return std::vector<Tensor>{variance(a)}; }));
const OpRegistrar kStdCorrection(
    define_op("std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
              "bool keepdim=False) -> Tensor")
        .shape(var_shape)
        .decompose([](const OpArgs& a) { return kSqrt({variance(a)}); }));
const OpRegistrar kStdDim(
    define_op("std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor")
        .shape(var_shape)
        .decompose([](const OpArgs& a) { return kSqrt({variance(a)}); }));

const OpRegistrar kVarMean(
    define_op("var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
              "bool keepdim=False) -> (Tensor, Tensor)")
        .shape([](const OpArgs& a) {
          const std::vector<OutputMeta> v = var_shape(a);
          return std::vector<OutputMeta>{v[0], v[0]};
        })
        .decompose([](const OpArgs& a) {
          const VarArgs v = var_args(a);
          return std::vector<Tensor>{variance(a),
                                     call1(kMeanDim, {a.tensor(0), v.dims, v.keepdim})};
        }));

// --- logsumexp(self, dim, keepdim) ---------------------------------------------------------

const OpRegistrar kLogsumexp(
    define_op("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const IntShape dims = a.int_list(1);
          Shape out;
          std::vector<bool> reduced(size_t(x.dim()), dims.empty());
          for (int64_t d : dims) reduced[size_t(wrap_dim(d, x.dim(), a.name()))] = true;
          for (int64_t d = 0; d < x.dim(); ++d) {
            if (!reduced[size_t(d)])
              out.push_back(x.sym_size(d));
            else if (a.boolean(2))
              out.push_back(1);
          }
          return std::vector<OutputMeta>{{is_floating(x.dtype()) ? x.dtype() : DType::F32, out}};
        })
        .decompose([](const OpArgs& a) {
          Tensor x = a.tensor(0);
          if (!is_floating(x.dtype())) x = call1(kToCopy, {x, DType::F32});
          IntShape dims = a.int_list(1);
          if (dims.empty())
            for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
          const bool keepdim = a.boolean(2);
          Tensor m = call1(kAmax, {x, dims, true});
          const Tensor zero = call1(kFull, {SymIntList{}, Scalar(int64_t(0)), x.dtype()});
          m = call1(kWhere, {call1(kIsinf, {m}), zero, m});
          const Tensor s = call1(kSumDim, {call1(kExp, {call1(kSub, {x, m})}), dims, keepdim});
          const Tensor shift = keepdim ? m : call1(kSqueezeDims, {m, dims});
          return std::vector<Tensor>{call1(kAdd, {call1(kLog, {s}), shift})};
        }));

// --- max.dim / min.dim: (values, indices) ----------------------------------------------

template <bool kMax>
OpDef extreme_dim_op(std::string_view schema) {
  return define_op(schema)
      .shape([](const OpArgs& a) {
        const Tensor& x = a.tensor(0);
        const int64_t dim = wrap_dim(a.int_(1), std::max<int64_t>(x.dim(), 1), a.name());
        INGOT_CHECK(x.dim() == 0 || x.sym_size(dim).maybe_int() != 0, ValueError,
                    "[{}] cannot reduce over dim {} of size 0 (self {})", a.name(), dim,
                    x.shape_string());
        Shape out;
        for (int64_t d = 0; d < x.dim(); ++d) {
          if (d != dim)
            out.push_back(x.sym_size(d));
          else if (a.boolean(2))
            out.push_back(1);
        }
        return std::vector<OutputMeta>{{x.dtype(), out}, {DType::I64, out}};
      })
      .decompose([](const OpArgs& a) {
        const Tensor& x = a.tensor(0);
        const int64_t dim = a.int_(1);
        const bool keepdim = a.boolean(2);
        // argmax / argmin take no bool: the same order as uint8.
        const Tensor xi = x.dtype() == DType::Bool ? call1(kToCopy, {x, DType::U8}) : x;
        Tensor values = call1(kMax ? kAmax : kAmin, {x, IntShape{dim}, keepdim});
        Tensor indices = call1(kMax ? kArgmax : kArgmin, {xi, dim, keepdim});
        return std::vector<Tensor>{values, indices};
      });
}

const OpRegistrar kMaxDim(extreme_dim_op<true>(
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"));
const OpRegistrar kMinDim(extreme_dim_op<false>(
    "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"));

}  // namespace
}  // namespace ingot
