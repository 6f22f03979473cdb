// histc: a histogram of a floating tensor's elements in `bins` equal bins over
// [min, max] (torch.histc). When min == max the data's own minimum and maximum are the
// range (widened by 1 on each side when those are equal too). Elements outside the
// range and NaNs are not counted; an element equal to max falls in the last bin. The
// bin of x is floor((x - min) * bins / (max - min)), computed in x's arithmetic type as
// torch's CPU kernel does. Output [bins] in the input's dtype.
#include <cmath>

#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

template <typename T>
void histc_loop(const Tensor& x, const Tensor& out, int64_t bins, double lo_arg, double hi_arg,
                const std::string& op) {
  using A = opmath_t<T>;
  const T* xd = x.data<T>();
  const int64_t n = x.numel();
  A lo = A(lo_arg), hi = A(hi_arg);
  if (lo == hi && n > 0) {
    lo = hi = A(xd[0]);
    for (int64_t i = 0; i < n; ++i) {
      const A v = A(xd[i]);
      if (std::isnan(v)) continue;
      lo = std::isnan(lo) || v < lo ? v : lo;
      hi = std::isnan(hi) || v > hi ? v : hi;
    }
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  INGOT_CHECK(std::isfinite(double(lo)) && std::isfinite(double(hi)), ValueError,
              "[{}] range of [{}, {}] is not finite", op, double(lo), double(hi));
  std::vector<A> counts(size_t(bins), A(0));
  for (int64_t i = 0; i < n; ++i) {
    const A v = A(xd[i]);
    if (!(v >= lo && v <= hi)) continue;  // also skips NaN
    int64_t pos = int64_t((v - lo) * A(bins) / (hi - lo));
    if (pos >= bins) pos = bins - 1;
    counts[size_t(pos)] += A(1);
  }
  T* od = out.data<T>();
  for (int64_t b = 0; b < bins; ++b) od[b] = T(counts[size_t(b)]);
}

// The decomposition every graph backend runs (ONNX, OpenVINO, ExecuTorch): a one-hot sum,
// so the element count may be symbolic, in the kernel's arithmetic type and order of
// operations, so each element lands in the bin the kernel puts it in:
//   pos    = trunc((x - lo) * bins / (hi - lo)), at most bins - 1          [n]
//   counts = sum(where(lo <= x <= hi, pos, -1)[:, None] == arange(bins), 0)  [bins]
// (pos >= 0 inside the range, so truncation is the kernel's floor). min == max takes the
// data's own range (widened by 1 on each side when that is one value); an empty input
// has none then (amin of nothing is an error, as in ONNX's ReduceMin).
std::vector<Tensor> histc_decomposition(const OpArgs& a) {
  const Tensor& self = a.tensor(0);
  const DType acc = self.dtype() == DType::F64 ? DType::F64 : DType::F32;
  const int64_t bins = a.int_(1);
  const double min = a.scalar(2).to_double(), max = a.scalar(3).to_double();
  const Tensor x = reshape(to(self, acc), {SymInt(-1)});  // [n]
  Tensor lo, hi, span;
  if (min == max) {
    lo = amin(x);
    hi = amax(x);
    const Tensor same = eq(lo, hi);
    lo = where(same, sub(lo, Scalar(1.0)), lo);
    hi = where(same, add(hi, Scalar(1.0)), hi);
    span = sub(hi, lo);
  } else {
    // hi - lo as the kernel computes it: in the arithmetic type.
    const double width = acc == DType::F32 ? double(float(max) - float(min)) : max - min;
    lo = full({}, Scalar(min), acc);
    hi = full({}, Scalar(max), acc);
    span = full({}, Scalar(width), acc);
  }
  Tensor pos = div(mul(sub(x, lo), Scalar(double(bins))), span);
  pos = clamp(pos, std::nullopt, Scalar(double(bins - 1)));
  const Tensor inside = logical_and(ge(x, lo), le(x, hi));  // false for NaN
  pos = to(where(inside, pos, full({}, Scalar(-1.0), acc)), DType::I64);
  const Tensor hits = eq(unsqueeze(pos, 1), arange(Scalar(bins), DType::I64));  // [n, bins]
  return {to(sum(to(hits, acc), {0}), self.dtype())};
}

const OpRegistrar kHistc(
    define_op("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor")
        .shape([](const OpArgs& a) {
          check_floating(a.tensor(0), a.name(), "self");
          INGOT_CHECK(a.int_(1) > 0, ValueError, "[{}] bins must be positive, got {}", a.name(),
                      a.int_(1));
          const double lo = a.scalar(2).to_double(), hi = a.scalar(3).to_double();
          INGOT_CHECK(lo <= hi, ValueError, "[{}] max ({}) must be at least min ({})", a.name(), hi,
                      lo);
          return std::vector<OutputMeta>{{a.tensor(0).dtype(), {SymInt(a.int_(1))}}};
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const Tensor x = contiguous(a.tensor(0));
          INGOT_DISPATCH_ALL_TYPES(x.dtype(), a.name(), [&]<typename T>() {
            if constexpr (std::is_floating_point_v<opmath_t<T>>)
              histc_loop<T>(x, out[0], a.int_(1), a.scalar(2).to_double(), a.scalar(3).to_double(),
                            a.name());
          });
        })
        .decompose(histc_decomposition));

}  // namespace
}  // namespace ingot
