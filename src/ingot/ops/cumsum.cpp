// cumsum / cumprod: inclusive prefix sum / product along one dim. Integer and bool inputs give
// int64 (torch promotes them); a dtype argument converts the input first. Sums run in float for
// 16-bit floats, double for float32/float64 (torch's CPU accumulation types).
#include "ingot/ops/registry.h"
#include "ingot/core/thread_pool.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/reduction.h"

namespace ingot {
namespace {

constexpr int64_t kGrain = 32768;

template <typename T>
using cumsum_acc_t =
    std::conditional_t<std::is_same_v<T, float>, double,
                       std::conditional_t<std::is_floating_point_v<opmath_t<T>>, opmath_t<T>, int64_t>>;

template <typename T>
T from_acc(cumsum_acc_t<T> a) {
  if constexpr (std::is_same_v<T, bool>) return a != 0;
  else return T(a);
}

// x and y contiguous [outer, n, inner]; kProd multiplies instead of adding.
template <typename T, bool kProd = false>
void cumsum_loop(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using A = cumsum_acc_t<T>;
  const A init = kProd ? A(1) : A(0);
  auto step = [](A acc, A v) { return kProd ? A(acc * v) : A(acc + v); };
  const int64_t per_outer = std::max<int64_t>(n * inner, 1);
  parallel_for(0, outer, std::max<int64_t>(1, kGrain / per_outer), [&](int64_t ob, int64_t oe) {
    std::vector<A> acc(static_cast<size_t>(inner));
    for (int64_t o = ob; o < oe; ++o) {
      const T* xo = x + o * n * inner;
      T* yo = y + o * n * inner;
      if (inner == 1) {  // along the last dim: one running sum
        A a = init;
        for (int64_t i = 0; i < n; ++i) {
          a = step(a, A(xo[i]));
          yo[i] = from_acc<T>(a);
        }
        continue;
      }
      std::fill(acc.begin(), acc.end(), init);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inner; ++j) {
          acc[size_t(j)] = step(acc[size_t(j)], A(xo[i * inner + j]));
          yo[i * inner + j] = from_acc<T>(acc[size_t(j)]);
        }
      }
    }
  });
}

std::vector<OutputMeta> cumulative_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  wrap_dim(a.int_(1), x.dim(), a.name());
  const DType t =
      a.optional_dtype(2).value_or(is_integral(x.dtype(), true) ? DType::I64 : x.dtype());
  return {{t, x.sym_sizes()}};
}

template <bool kProd>
void cumulative_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x_in = a.tensor(0);
  const int64_t dim = wrap_dim(a.int_(1), std::max<int64_t>(x_in.dim(), 1), a.name());
  const Tensor x = contiguous(to(x_in, out[0].dtype()));
  if (x.numel() == 0) return;
  const IntShape sizes = x.sizes();
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(sizes.size()); ++d) {
    if (d < dim)
      outer *= sizes[size_t(d)];
    else if (d == dim)
      n = sizes[size_t(d)];
    else
      inner *= sizes[size_t(d)];
  }
  INGOT_DISPATCH_ALL_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    cumsum_loop<T, kProd>(x.data<T>(), out[0].data<T>(), outer, n, inner);
  });
}

const OpRegistrar kCumprod(
    define_op("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
        .shape(cumulative_shape)
        .cpu(cumulative_kernel<true>));

const OpRegistrar kCumsum(
    define_op("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          wrap_dim(a.int_(1), x.dim(), a.name());
          const DType t =
              a.optional_dtype(2).value_or(is_integral(x.dtype(), true) ? DType::I64 : x.dtype());
          return std::vector<OutputMeta>{{t, x.sym_sizes()}};
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const Tensor& x_in = a.tensor(0);
          const int64_t dim = wrap_dim(a.int_(1), x_in.dim(), a.name());
          const Tensor x = contiguous(to(x_in, out[0].dtype()));
          if (x.numel() == 0) return;
          const IntShape sizes = x.sizes();
          int64_t outer = 1, n = 1, inner = 1;
          for (int64_t d = 0; d < int64_t(sizes.size()); ++d) {
            if (d < dim) outer *= sizes[size_t(d)];
            else if (d == dim) n = sizes[size_t(d)];
            else inner *= sizes[size_t(d)];
          }
          INGOT_DISPATCH_ALL_TYPES(x.dtype(), a.name(), [&]<typename T>() {
            cumsum_loop<T>(x.data<T>(), out[0].data<T>(), outer, n, inner);
          });
        }));

const OpHandle kCumsumOp("cumsum");

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kCumsumOp({t, dim, dtype})[0];
}

}  // namespace ingot
