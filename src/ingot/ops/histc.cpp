// histc: a histogram of a floating tensor's elements in `bins` equal bins over
// [min, max] (torch.histc). When min == max the data's own minimum and maximum are the
// range (widened by 1 on each side when those are equal too). Elements outside the
// range and NaNs are not counted; an element equal to max falls in the last bin. The
// bin of x is floor((x - min) * bins / (max - min)), computed in x's arithmetic type as
// torch's CPU kernel does. Output [bins] in the input's dtype.
#include <cmath>

#include "ingot/ops/functional/views.h"
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
        }));

}  // namespace
}  // namespace ingot
