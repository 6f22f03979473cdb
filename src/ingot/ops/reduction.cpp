// Reductions: sum, prod, mean, amax, amin, argmax, argmin. Shapes and dtypes follow ATen; the
// loops are in cpu/reduce.h, the per-op arithmetic in the Reducer policies below.
#include <cmath>
#include <limits>

#include "ingot/ops/registry.h"
#include "ingot/ops/cpu/reduce.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/reduction.h"

namespace ingot {
namespace {

// --- arguments and shapes ------------------------------------------------------------

struct ReduceArgs {
  std::optional<IntShape> dims;  // none or empty: every dim
  bool keepdim = false;
  std::optional<DType> dtype;
};

// Reads the `dim`, `keepdim` and `dtype` arguments of any reduction schema by name.
ReduceArgs reduce_args(const OpArgs& a) {
  const Schema& s = a.op().schema;
  ReduceArgs r;
  if (int i = s.argument_index("dim"); i >= 0 && !a[size_t(i)].is_none()) {
    const Value& v = a[size_t(i)];
    r.dims = v.is(Value::Kind::Int) ? IntShape{a.int_(size_t(i))} : a.int_list(size_t(i));
  }
  if (int i = s.argument_index("keepdim"); i >= 0) r.keepdim = a.boolean(size_t(i));
  if (int i = s.argument_index("dtype"); i >= 0) r.dtype = a.optional_dtype(size_t(i));
  return r;
}

// Which dims are reduced; throws on an out-of-range or repeated dim.
std::vector<bool> reduced_dims(const ReduceArgs& r, int64_t rank, std::string_view op) {
  std::vector<bool> mask(size_t(rank), !r.dims || r.dims->empty());
  if (!r.dims) return mask;
  std::vector<bool> seen(size_t(std::max<int64_t>(rank, 1)), false);
  for (int64_t d : *r.dims) {
    const int64_t w = wrap_dim(d, rank, op);
    INGOT_CHECK(!seen[size_t(w)], ValueError,
                "[{}] dim {} appears more than once in the list of dims {}", op, w,
                fmt::join(*r.dims, ", "));
    seen[size_t(w)] = true;
    if (rank > 0) mask[size_t(w)] = true;
  }
  return mask;
}

Shape reduced_shape(const Tensor& x, const std::vector<bool>& mask, bool keepdim) {
  Shape out;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) out.push_back(x.sym_size(int64_t(d)));
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// max/min/arg* have no identity for an empty set: a reduced dim of size 0 is an error.
void check_nonempty(const Tensor& x, const std::vector<bool>& mask, std::string_view op) {
  for (size_t d = 0; d < mask.size(); ++d) {
    INGOT_CHECK(!mask[d] || x.sym_size(int64_t(d)).maybe_int() != 0, ValueError,
                "[{}] cannot reduce over dim {} of size 0 (input shape {}); there is no "
                "identity for this reduction",
                op, d, x.shape_string());
  }
  INGOT_CHECK(!mask.empty() || x.sym_numel().maybe_int() != 0, ValueError,
              "[{}] cannot reduce an empty tensor", op);
}

// --- reducer policies -------------------------------------------------------------------

template <typename M>
bool is_nan(M x) {
  if constexpr (std::is_floating_point_v<M>) return std::isnan(x);
  else return false;
}

// Accumulator of sums: float for 16-bit floats, double for double, int64 for integers.
template <typename T>
using sum_acc_t = std::conditional_t<std::is_floating_point_v<opmath_t<T>>, opmath_t<T>, int64_t>;

template <typename T, typename Out>
struct SumReducer {
  using acc_t = sum_acc_t<T>;
  acc_t init() const { return acc_t(0); }
  acc_t step(acc_t a, T v, int64_t) const { return a + acc_t(v); }
  acc_t merge(acc_t a, acc_t b) const { return a + b; }
  Out finish(acc_t a) const {
    if constexpr (std::is_same_v<Out, bool>) return a != acc_t(0);
    else return Out(a);
  }
};

// Products: the same accumulators as sums (integers and bool in int64).
template <typename T, typename Out>
struct ProdReducer {
  using acc_t = sum_acc_t<T>;
  acc_t init() const { return acc_t(1); }
  acc_t step(acc_t a, T v, int64_t) const { return a * acc_t(v); }
  acc_t merge(acc_t a, acc_t b) const { return a * b; }
  Out finish(acc_t a) const {
    if constexpr (std::is_same_v<Out, bool>)
      return a != acc_t(0);
    else
      return Out(a);
  }
};

template <typename T>
struct MeanReducer {
  using acc_t = opmath_t<T>;
  acc_t inv_count;  // 1 / n (inf for n == 0, giving NaN from 0 * inf)
  acc_t init() const { return acc_t(0); }
  acc_t step(acc_t a, T v, int64_t) const { return a + acc_t(v); }
  acc_t merge(acc_t a, acc_t b) const { return a + b; }
  T finish(acc_t a) const { return T(a * inv_count); }
};

// Extremes with NaN propagation. Max/min over bool is or/and.
template <typename T, bool kMax>
struct ExtremeReducer {
  using acc_t = opmath_t<T>;
  acc_t init() const {
    if constexpr (std::is_floating_point_v<acc_t>) {
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    } else {
      return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
    }
  }
  static bool better(acc_t x, acc_t a) {
    // Bitwise | keeps the select branch-free (vectorisable).
    return kMax ? ((x > a) | is_nan(x)) : ((x < a) | is_nan(x));
  }
  acc_t merge(acc_t a, acc_t b) const { return better(b, a) ? b : a; }
  acc_t step(acc_t a, T v, int64_t) const { return merge(a, acc_t(v)); }
  T finish(acc_t a) const { return T(a); }
};

// Index of the first extreme; a NaN beats every number and the first NaN wins.
template <typename T, bool kMax>
struct ArgExtremeReducer {
  using M = opmath_t<T>;
  struct acc_t {
    M v;
    int64_t i;  // -1: nothing seen yet
  };
  acc_t init() const { return {M(0), -1}; }
  acc_t step(acc_t a, T v, int64_t i) const {
    const M x = M(v);
    // Indices arrive in increasing order, so ties keep the earlier one.
    if (a.i < 0 || (!is_nan(a.v) && (kMax ? x > a.v : x < a.v))) return {x, i};
    if (is_nan(x) && !is_nan(a.v)) return {x, i};
    return a;
  }
  acc_t merge(acc_t a, acc_t b) const {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
    if (a.v != b.v) return (kMax ? a.v > b.v : a.v < b.v) ? a : b;
    return a.i < b.i ? a : b;
  }
  int64_t finish(acc_t a) const { return a.i; }

  // Contiguous runs (argmax over a vocabulary): find the extreme value with vectorised
  // lanes, then the first index holding it, scanning in blocks that are first tested
  // with a vectorisable "any match".
  acc_t run(const T* p, int64_t n, int64_t idx0) const {
    if (n == 0) return init();
    const M m = cpu::reduce_run(ExtremeReducer<T, kMax>{}, p, n, 0);
    const bool nan = is_nan(m);
    auto hit = [&](T v) { return nan ? is_nan(M(v)) : M(v) == m; };
    constexpr int64_t kBlock = 64;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t e = std::min(n, b + kBlock);
      bool any = false;
      for (int64_t i = b; i < e; ++i) any |= hit(p[i]);
      if (!any) continue;
      for (int64_t i = b; i < e; ++i) {
        if (hit(p[i])) return {m, idx0 + i};
      }
    }
    return {m, idx0};  // unreachable: m is one of the values
  }
};

// --- sum / mean ------------------------------------------------------------------------

std::vector<OutputMeta> sum_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const ReduceArgs r = reduce_args(a);
  const auto mask = reduced_dims(r, x.dim(), a.name());
  const DType t = r.dtype.value_or(is_integral(x.dtype(), true) ? DType::I64 : x.dtype());
  return {{t, reduced_shape(x, mask, r.keepdim)}};
}

void sum_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  const ReduceArgs r = reduce_args(a);
  const auto mask = reduced_dims(r, x.dim(), a.name());
  const DType t = out[0].dtype();
  // Integers widen to int64 exactly while summing; any other dtype change converts the
  // input first, as torch does.
  const bool widen = t == DType::I64 && is_integral(x.dtype(), true);
  const Tensor src = widen ? x : to(x, t);
  INGOT_DISPATCH_ALL_TYPES(src.dtype(), a.name(), [&]<typename T>() {
    if (widen) cpu::reduce<T, int64_t>(out[0], src, mask, SumReducer<T, int64_t>{});
    else cpu::reduce<T, T>(out[0], src, mask, SumReducer<T, T>{});
  });
}

// prod: sum's dtypes (integers and bool give int64) and loops, multiplying.
void prod_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  const auto mask = reduced_dims(reduce_args(a), x.dim(), a.name());
  const DType t = out[0].dtype();
  const bool widen = t == DType::I64 && is_integral(x.dtype(), true);
  const Tensor src = widen ? x : to(x, t);
  INGOT_DISPATCH_ALL_TYPES(src.dtype(), a.name(), [&]<typename T>() {
    if (widen)
      cpu::reduce<T, int64_t>(out[0], src, mask, ProdReducer<T, int64_t>{});
    else
      cpu::reduce<T, T>(out[0], src, mask, ProdReducer<T, T>{});
  });
}

std::vector<OutputMeta> mean_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const ReduceArgs r = reduce_args(a);
  const auto mask = reduced_dims(r, x.dim(), a.name());
  const DType t = r.dtype.value_or(x.dtype());
  INGOT_CHECK(is_floating(t), DTypeError,
              "[{}] cannot compute the mean in {}: the input (or the dtype argument) must be "
              "floating; pass dtype=float32 or convert the input",
              a.name(), t);
  return {{t, reduced_shape(x, mask, r.keepdim)}};
}

void mean_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  const auto mask = reduced_dims(reduce_args(a), x.dim(), a.name());
  const Tensor src = to(x, out[0].dtype());
  int64_t n = 1;
  for (size_t d = 0; d < mask.size(); ++d) n *= mask[d] ? x.size(int64_t(d)) : 1;
  INGOT_DISPATCH_FLOATING_TYPES(src.dtype(), a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    const M inv = n == 0 ? std::numeric_limits<M>::infinity() : M(1) / M(n);
    cpu::reduce<T, T>(out[0], src, mask, MeanReducer<T>{inv});
  });
}

// --- amax / amin / argmax / argmin -----------------------------------------------------

std::vector<OutputMeta> extreme_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const ReduceArgs r = reduce_args(a);
  const auto mask = reduced_dims(r, x.dim(), a.name());
  check_nonempty(x, mask, a.name());
  return {{x.dtype(), reduced_shape(x, mask, r.keepdim)}};
}

template <bool kMax>
void extreme_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  const auto mask = reduced_dims(reduce_args(a), x.dim(), a.name());
  INGOT_DISPATCH_ALL_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    cpu::reduce<T, T>(out[0], x, mask, ExtremeReducer<T, kMax>{});
  });
}

std::vector<OutputMeta> arg_extreme_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  INGOT_CHECK(x.dtype() != DType::Bool, DTypeError,
              "[{}] bool tensors are not supported; convert to an integer dtype first", a.name());
  const ReduceArgs r = reduce_args(a);
  const auto mask = reduced_dims(r, x.dim(), a.name());
  check_nonempty(x, mask, a.name());
  return {{DType::I64, reduced_shape(x, mask, r.keepdim)}};
}

template <bool kMax>
void arg_extreme_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  const auto mask = reduced_dims(reduce_args(a), x.dim(), a.name());
  INGOT_DISPATCH_NUMERIC_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    cpu::reduce<T, int64_t>(out[0], x, mask, ArgExtremeReducer<T, kMax>{});
  });
}

const OpRegistrar kSum(define_op("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
                           .shape(sum_shape)
                           .cpu(sum_kernel));
const OpRegistrar kSumDim(
    define_op("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
              "ScalarType? dtype=None) -> Tensor")
        .shape(sum_shape)
        .cpu(sum_kernel));
const OpRegistrar kProd(define_op("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor")
                            .shape(sum_shape)
                            .cpu(prod_kernel));
const OpRegistrar kProdDim(define_op("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
                                     "ScalarType? dtype=None) -> Tensor")
                               .shape(sum_shape)
                               .cpu(prod_kernel));
const OpRegistrar kMean(define_op("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor")
                            .shape(mean_shape)
                            .cpu(mean_kernel));
const OpRegistrar kMeanDim(
    define_op("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, "
              "ScalarType? dtype=None) -> Tensor")
        .shape(mean_shape)
        .cpu(mean_kernel));
const OpRegistrar kAmax(
    define_op("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
        .shape(extreme_shape)
        .cpu(extreme_kernel<true>));
const OpRegistrar kAmin(
    define_op("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
        .shape(extreme_shape)
        .cpu(extreme_kernel<false>));
const OpRegistrar kArgmax(
    define_op("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
        .shape(arg_extreme_shape)
        .cpu(arg_extreme_kernel<true>));
const OpRegistrar kArgmin(
    define_op("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
        .shape(arg_extreme_shape)
        .cpu(arg_extreme_kernel<false>));

const OpHandle kSumOp("sum"), kSumDimOp("sum.dim_IntList"), kMeanOp("mean"),
    kMeanDimOp("mean.dim"), kAmaxOp("amax"), kAminOp("amin"), kArgmaxOp("argmax"),
    kArgminOp("argmin");

}  // namespace

Tensor sum(const Tensor& t, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kSumOp({t, dtype})[0];
}
Tensor sum(const Tensor& t, IntShape dims, bool keepdim, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kSumDimOp({t, dims, keepdim, dtype})[0];
}
Tensor mean(const Tensor& t, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kMeanOp({t, dtype})[0];
}
Tensor mean(const Tensor& t, IntShape dims, bool keepdim, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kMeanDimOp({t, dims, keepdim, dtype})[0];
}
Tensor amax(const Tensor& t, IntShape dims, bool keepdim, std::source_location where) {
  CallSiteScope call_site(where);
  return kAmaxOp({t, dims, keepdim})[0];
}
Tensor amin(const Tensor& t, IntShape dims, bool keepdim, std::source_location where) {
  CallSiteScope call_site(where);
  return kAminOp({t, dims, keepdim})[0];
}
Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim, std::source_location where) {
  CallSiteScope call_site(where);
  return kArgmaxOp({t, dim, keepdim})[0];
}
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim, std::source_location where) {
  CallSiteScope call_site(where);
  return kArgminOp({t, dim, keepdim})[0];
}

}  // namespace ingot
