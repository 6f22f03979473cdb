// scatter_add and scatter_reduce.two: out = self, then every element of src is combined
// into out at its index along `dim` (sum, prod, mean, amax, amin). With include_self
// False, a position that receives any element starts from its first element instead of
// self (positions receiving none keep self). mean divides by the number of elements
// combined (self counting as one when included), flooring for integer dtypes as torch
// does. amax / amin propagate NaN. Duplicate indices combine in index order, serially,
// so the result is deterministic.
#include <cmath>
#include <cstdint>

#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/views.h"
#include "ingot/ops/index_utils.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

enum class Reduce { Sum, Prod, Mean, Amax, Amin };

Reduce parse_reduce(const OpArgs& a, const std::string& s) {
  if (s == "sum") return Reduce::Sum;
  if (s == "prod") return Reduce::Prod;
  if (s == "mean") return Reduce::Mean;
  if (s == "amax") return Reduce::Amax;
  if (s == "amin") return Reduce::Amin;
  INGOT_THROW(ValueError, "[{}] reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got '{}'",
              a.name(), s);
}

template <typename M>
M combine(Reduce r, M acc, M v) {
  switch (r) {
    case Reduce::Sum:
    case Reduce::Mean:
      return M(acc + v);
    case Reduce::Prod:
      return M(acc * v);
    case Reduce::Amax:
    case Reduce::Amin:
      if constexpr (std::is_floating_point_v<M>) {
        if (std::isnan(acc) || std::isnan(v)) return acc + v;
      }
      return (r == Reduce::Amax) == (v > acc) ? v : acc;
  }
  return acc;
}

// Row-major strides of a shape.
IntShape contiguous_strides(const IntShape& sizes) {
  IntShape s(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) s[d - 1] = s[d] * sizes[d];
  return s;
}

void scatter_reduce_impl(const OpArgs& a, std::span<const Tensor> out, Reduce r,
                         bool include_self) {
  const Tensor& self = a.tensor(0);
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  const int64_t dim = wrap_dim(a.int_(1), rank, a.name());
  const Tensor index = contiguous(a.tensor(2));
  const Tensor src = contiguous(a.tensor(3));
  IntShape self_sizes = self.sizes(), index_sizes = index.sizes(), src_sizes = src.sizes();
  if (self_sizes.empty()) self_sizes = {1};
  if (index_sizes.empty()) index_sizes = {1};
  if (src_sizes.empty()) src_sizes = {1};
  const std::vector<int64_t> idx =
      read_indices(index, self_sizes[size_t(dim)], dim, a.name(), false);
  const IntShape out_strides = contiguous_strides(self_sizes),
                 src_strides = contiguous_strides(src_sizes);
  const Tensor self_c = contiguous(self);
  INGOT_DISPATCH_ALL_TYPES(self.dtype(), a.name(), [&]<typename T>() {
    using M = std::conditional_t<std::is_same_v<T, bool>, bool, opmath_t<T>>;
    using S = std::conditional_t<std::is_same_v<T, bool>, uint8_t, M>;  // not vector<bool>
    const int64_t n = self_c.numel();
    const T* ps = self_c.data<T>();
    const T* pv = src.data<T>();
    std::vector<S> acc(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) acc[size_t(i)] = S(M(ps[i]));
    std::vector<int64_t> count(size_t(n), include_self ? 1 : 0);
    std::vector<int64_t> coord(index_sizes.size(), 0);
    for (size_t k = 0; k < idx.size(); ++k) {
      int64_t o = 0, s = 0;
      for (size_t d = 0; d < coord.size(); ++d) {
        o += (int64_t(d) == dim ? idx[k] : coord[d]) * out_strides[d];
        s += coord[d] * src_strides[d];
      }
      const M v = M(pv[s]);
      S& slot = acc[size_t(o)];
      if constexpr (std::is_same_v<M, bool>) {
        // bool: sum / mean / amax are or, prod / amin are and.
        const bool is_or = r == Reduce::Sum || r == Reduce::Mean || r == Reduce::Amax;
        slot = count[size_t(o)] == 0 ? v : (is_or ? (slot || v) : (slot && v));
      } else {
        slot = count[size_t(o)] == 0 ? v : combine(r, slot, v);
      }
      ++count[size_t(o)];
      for (size_t d = coord.size(); d-- > 0;) {  // next index position, row-major
        if (++coord[d] < index_sizes[d]) break;
        coord[d] = 0;
      }
    }
    const Tensor result = Tensor::empty(self.sizes(), self.dtype());
    T* pr = result.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      M v = M(acc[size_t(i)]);
      if constexpr (!std::is_same_v<M, bool>) {
        const int64_t c = count[size_t(i)];
        if (r == Reduce::Mean && c > 1) {
          if constexpr (std::is_floating_point_v<M>) {
            v = v / M(c);
          } else {
            M q = M(v / M(c));
            if ((v % M(c) != 0) && (v < 0)) --q;  // floor
            v = q;
          }
        }
      }
      pr[i] = T(v);
    }
    cpu::copy_cast(out[0], result);
  });
}

std::vector<OutputMeta> scatter_reduce_shape(const OpArgs& a) {
  const Tensor& src = a.tensor(3);
  check_gather_scatter(a, &src);
  return {OutputMeta{a.tensor(0).dtype(), a.tensor(0).sym_sizes()}};
}

const OpRegistrar kScatterAdd(
    define_op("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
        .shape(scatter_reduce_shape)
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          scatter_reduce_impl(a, out, Reduce::Sum, true);
        }));

const OpRegistrar kScatterReduce(
    define_op("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
              "bool include_self=True) -> Tensor")
        .shape([](const OpArgs& a) {
          parse_reduce(a, a.string(4));
          return scatter_reduce_shape(a);
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          scatter_reduce_impl(a, out, parse_reduce(a, a.string(4)), a.boolean(5));
        }));

}  // namespace
}  // namespace ingot
