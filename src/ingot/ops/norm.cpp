// Normalisation ops: layer_norm, rms_norm.
//
// Both normalise rows of N = prod(normalized_shape) trailing elements. The input is
// made contiguous ([rows, N]), each row is converted once into an op-math buffer
// (float for f16/bf16/f32, double for f64) and reduced there with two passes; the
// output is contiguous in the input's dtype.
#include <cmath>
#include <limits>

#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/arithmetic.h"
#include "ingot/ops/functional/nn.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

// Validates input / normalized_shape / an optional parameter tensor; returns nothing,
// throws with the op's name, the shapes and the fix.
void check_norm_args(const OpArgs& a,
                     std::initializer_list<std::pair<size_t, const char*>> params) {
  const Tensor& input = a.tensor(0);
  check_floating(input, a.name(), "input");
  const SymIntList& shape = a.sym_int_list(1);
  INGOT_CHECK(!shape.empty(), ValueError,
              "[{}] normalized_shape must contain at least one dim, got []", a.name());
  const Shape& in = input.sym_sizes();
  bool fits = in.size() >= shape.size();
  for (size_t i = 0; fits && i < shape.size(); ++i) {
    fits = bool(in[in.size() - shape.size() + i] == shape[i]);
  }
  INGOT_CHECK(fits, ShapeError,
              "[{}] normalized_shape={} expects an input whose trailing dims are {}, got input "
              "of shape {}",
              a.name(), shape_str(shape), shape_str(shape), input.shape_string());
  for (auto [index, name] : params) {
    Tensor p = a.optional_tensor(index);
    if (!p.defined()) continue;
    check_floating(p, a.name(), name);
    bool same = p.sym_sizes().size() == shape.size();
    for (size_t i = 0; same && i < shape.size(); ++i) same = bool(p.sym_sizes()[i] == shape[i]);
    INGOT_CHECK(same, ShapeError, "[{}] {} must have shape normalized_shape={}, got {}", a.name(),
                name, shape_str(shape), p.shape_string());
  }
}

std::vector<OutputMeta> layer_norm_shape(const OpArgs& a) {
  check_norm_args(a, {{2, "weight"}, {3, "bias"}});
  return {OutputMeta{a.tensor(0).dtype(), a.tensor(0).sym_sizes()}};
}

std::vector<OutputMeta> rms_norm_shape(const OpArgs& a) {
  check_norm_args(a, {{2, "weight"}});
  return {OutputMeta{a.tensor(0).dtype(), a.tensor(0).sym_sizes()}};
}

// t itself when contiguous, else a contiguous copy made without going through the
// dispatcher (kernels never re-enter call_op).
Tensor contiguous_for_kernel(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor c = Tensor::empty(t.sizes(), t.dtype());
  cpu::copy_cast(c, t);
  return c;
}

// An optional parameter tensor converted to a contiguous Acc vector (empty if absent).
template <typename Acc>
std::vector<Acc> param_as(const Tensor& p) {
  if (!p.defined()) return {};
  // Converted straight into the vector (a borrowed storage over it: no tensor allocation).
  std::vector<Acc> v(size_t(p.numel()));
  const IntShape sizes = p.sizes();
  Tensor c = Tensor::from_storage(
      Storage::from_external(v.data(), std::max<size_t>(v.size() * sizeof(Acc), 1), nullptr, true),
      dtype_of<Acc>, sizes, contiguous_strides(sizes), 0);
  cpu::copy_cast(c, p);
  return v;
}

// Sum of f(i) for i < n with 16 independent partial sums: vectorisable without
// reassociation, and more accurate than one running sum.
template <typename Acc, typename F>
Acc lane_sum(int64_t n, F f) {
  constexpr int kLanes = 16;
  Acc part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) part[k] += f(i + k);
  }
  for (int k = 0; i < n; ++i, ++k) part[k] += f(i);
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int k = 0; k < w; ++k) part[k] += part[k + w];
  }
  return part[0];
}

// Runs row_fn(x_row_as_acc, out_row) over the [rows, n] contiguous input in parallel;
// each chunk owns one conversion buffer.
template <typename T, typename Acc, typename RowFn>
void for_each_row(const Tensor& x, const Tensor& out, int64_t n, RowFn row_fn) {
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  const T* xd = x.data<T>();
  T* od = out.data<T>();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
  parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<Acc> buf(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = xd + r * n;
      for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = Acc(xr[i]);
      row_fn(buf.data(), od + r * n);
    }
  });
}

int64_t normalized_numel(const OpArgs& a) {
  int64_t n = 1;
  for (int64_t s : a.int_list(1)) n *= s;
  return n;
}

void layer_norm_kernel(const OpArgs& a, std::span<const Tensor> out) {
  Tensor x = contiguous_for_kernel(a.tensor(0));
  const int64_t n = normalized_numel(a);
  INGOT_DISPATCH_FLOATING_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    using Acc = opmath_t<T>;
    const std::vector<Acc> w = param_as<Acc>(a.optional_tensor(2));
    const std::vector<Acc> b = param_as<Acc>(a.optional_tensor(3));
    const Acc eps = Acc(a.f64(4));
    for_each_row<T, Acc>(x, out[0], n, [&](const Acc* xr, T* o) {
      const Acc mean = lane_sum<Acc>(n, [&](int64_t i) { return xr[i]; }) / Acc(n);
      const Acc var = lane_sum<Acc>(n,
                                    [&](int64_t i) {
                                      const Acc d = xr[i] - mean;
                                      return d * d;
                                    }) /
                      Acc(n);
      const Acc rstd = Acc(1) / std::sqrt(var + eps);
      for (int64_t i = 0; i < n; ++i) {
        Acc y = (xr[i] - mean) * rstd;
        if (!w.empty()) y *= w[size_t(i)];
        if (!b.empty()) y += b[size_t(i)];
        o[i] = T(y);
      }
    });
  });
}

// Order of operations (ATen's rms_norm composite, PyTorch >= 2.6):
//   r = 1 / sqrt(sum(x^2) / N + eps)   in opmath, eps converted to opmath
//   out = T((x * r) * w)               w converted to opmath; one rounding at the end
// For Hugging Face's order (round to T before the weight multiply) see rms_norm_hf.
void rms_norm_kernel(const OpArgs& a, std::span<const Tensor> out) {
  Tensor x = contiguous_for_kernel(a.tensor(0));
  const int64_t n = normalized_numel(a);
  INGOT_DISPATCH_FLOATING_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    using Acc = opmath_t<T>;
    const std::vector<Acc> w = param_as<Acc>(a.optional_tensor(2));
    const Acc eps = Acc(a.optional_f64(3).value_or(double(std::numeric_limits<Acc>::epsilon())));
    for_each_row<T, Acc>(x, out[0], n, [&](const Acc* xr, T* o) {
      const Acc ss = lane_sum<Acc>(n, [&](int64_t i) { return xr[i] * xr[i]; });
      const Acc r = Acc(1) / std::sqrt(ss / Acc(n) + eps);
      if (w.empty()) {
        for (int64_t i = 0; i < n; ++i) o[i] = T(xr[i] * r);
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = T(xr[i] * r * w[size_t(i)]);
      }
    });
  });
}

const OpRegistrar kLayerNorm(
    define_op("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
              "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor")
        .shape(layer_norm_shape)
        .cpu(layer_norm_kernel));

const OpRegistrar kRmsNorm(
    define_op("rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
              "float? eps=None) -> Tensor")
        .shape(rms_norm_shape)
        .cpu(rms_norm_kernel));

const OpHandle kLayerNormOp("layer_norm"), kRmsNormOp("rms_norm");

}  // namespace

Tensor layer_norm(const Tensor& input, const SymIntList& normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps, std::source_location where) {
  CallSiteScope call_site(where);
  return kLayerNormOp({input, normalized_shape, weight, bias, eps})[0];
}

Tensor rms_norm(const Tensor& input, const SymIntList& normalized_shape,
                const std::optional<Tensor>& weight, std::optional<double> eps, std::source_location where) {
  CallSiteScope call_site(where);
  return kRmsNormOp({input, normalized_shape, weight, eps})[0];
}

Tensor rms_norm_hf(const Tensor& input, const Tensor& weight, double eps, std::source_location where) {
  CallSiteScope call_site(where);
  INGOT_CHECK(input.dim() >= 1, ShapeError,
              "[rms_norm_hf] input must have at least one dim, got shape {}", input.shape_string());
  const SymIntList last{input.sym_size(input.dim() - 1)};
  return mul(weight, rms_norm(input, last, std::nullopt, eps));
}

}  // namespace ingot
