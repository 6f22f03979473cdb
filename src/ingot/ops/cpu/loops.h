// Elementwise iteration over strided, broadcast operands (a small TensorIterator).
//
// Operand 0 is the output; inputs are broadcast to its shape (stride 0 along stretched
// dims). Dims are coalesced where every operand is contiguous across them, so a
// contiguous op becomes one flat loop the compiler vectorises. Large loops are split
// over the thread pool by flat element index.
#pragma once

#include <array>
#include <utility>

#include "ingot/core/tensor.h"
#include "ingot/core/thread_pool.h"

namespace ingot::cpu {

// Elements per thread below which a loop stays single-threaded.
inline constexpr int64_t kElementwiseGrain = 32768;

template <size_t N>
struct StridedIter {
  IntShape sizes;                      // iteration shape (coalesced), outermost first
  std::array<IntShape, N> strides;     // byte strides per operand, same rank as sizes
  std::array<char*, N> base;           // address of element [0, ..., 0] per operand
  int64_t numel = 0;
};

// Builds the iteration for output `out` and inputs broadcast to it.
template <size_t N>
StridedIter<N> make_iter(const std::array<const Tensor*, N>& ops) {
  StridedIter<N> it;
  const Tensor& out = *ops[0];
  const IntShape out_sizes = out.sizes();
  const size_t rank = out_sizes.size();
  it.numel = shape_numel(out_sizes);
  IntShape sizes = out_sizes;
  std::array<IntShape, N> strides;
  for (size_t k = 0; k < N; ++k) {
    const Tensor& t = *ops[k];
    const size_t r = size_t(t.dim());
    const int64_t item = int64_t(itemsize(t.dtype()));
    strides[k].assign(rank, 0);
    for (size_t d = 0; d < r; ++d) {
      const size_t od = rank - r + d;  // broadcast aligns at the right
      strides[k][od] = t.size(int64_t(d)) == 1 ? 0 : t.stride(int64_t(d)) * item;
    }
    it.base[k] = static_cast<char*>(t.raw_data());
  }
  // Drop size-1 dims, then merge dim d into d-1 when every operand steps evenly.
  IntShape cs;
  std::array<IntShape, N> cst;
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !cs.empty();
    for (size_t k = 0; k < N && merge; ++k) {
      merge = cst[k].back() == strides[k][d] * sizes[d];
    }
    if (merge) {
      cs.back() *= sizes[d];
      for (size_t k = 0; k < N; ++k) cst[k].back() = strides[k][d];
    } else {
      cs.push_back(sizes[d]);
      for (size_t k = 0; k < N; ++k) cst[k].push_back(strides[k][d]);
    }
  }
  if (cs.empty()) {  // a single element
    cs.push_back(1);
    for (size_t k = 0; k < N; ++k) cst[k].push_back(0);
  }
  it.sizes = std::move(cs);
  it.strides = std::move(cst);
  return it;
}

// Calls inner(ptrs, inner_strides, n) over runs of the innermost dim, for flat
// elements [begin, end).
template <size_t N, typename Inner>
void iterate_range(const StridedIter<N>& it, int64_t begin, int64_t end, Inner&& inner) {
  const size_t rank = it.sizes.size();
  const int64_t inner_size = it.sizes[rank - 1];
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = it.strides[k][rank - 1];
  // Multi-index of `begin`.
  IntShape idx(rank, 0);
  int64_t rem = begin;
  for (size_t d = rank; d-- > 0;) {
    idx[d] = rem % it.sizes[d];
    rem /= it.sizes[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    std::array<char*, N> ptrs;
    for (size_t k = 0; k < N; ++k) {
      char* p = it.base[k];
      for (size_t d = 0; d < rank; ++d) p += idx[d] * it.strides[k][d];
      ptrs[k] = p;
    }
    const int64_t n = std::min(inner_size - idx[rank - 1], end - pos);
    inner(ptrs, inner_strides, n);
    pos += n;
    idx[rank - 1] += n;
    for (size_t d = rank - 1; d > 0 && idx[d] == it.sizes[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

template <size_t N, typename Inner>
void iterate(const StridedIter<N>& it, Inner&& inner) {
  parallel_for(0, it.numel, kElementwiseGrain,
               [&](int64_t b, int64_t e) { iterate_range(it, b, e, inner); });
}

namespace detail {
template <typename Out, typename... In, typename F, size_t... I>
void elementwise_impl(const StridedIter<1 + sizeof...(In)>& it, F& f, std::index_sequence<I...>) {
  constexpr size_t N = 1 + sizeof...(In);
  iterate(it, [&](const std::array<char*, N>& p, const std::array<int64_t, N>& s, int64_t n) {
    const bool contiguous = s[0] == sizeof(Out) && ((s[I + 1] == sizeof(In)) && ...);
    if (contiguous) {
      Out* out = reinterpret_cast<Out*>(p[0]);
      std::tuple<const In*...> in{reinterpret_cast<const In*>(p[I + 1])...};
      for (int64_t i = 0; i < n; ++i) out[i] = f(std::get<I>(in)[i]...);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) =
            f(*reinterpret_cast<const In*>(p[I + 1] + i * s[I + 1])...);
      }
    }
  });
}
}  // namespace detail

// out[i] = f(in_0[i], in_1[i], ...) with inputs broadcast to out's shape. Every
// operand's dtype must match its C++ type (callers convert with `to` first).
template <typename Out, typename... In, typename F>
void elementwise(const Tensor& out, std::array<const Tensor*, sizeof...(In)> inputs, F f) {
  constexpr size_t N = 1 + sizeof...(In);
  std::array<const Tensor*, N> ops;
  ops[0] = &out;
  for (size_t k = 0; k < sizeof...(In); ++k) ops[k + 1] = inputs[k];
  INGOT_INTERNAL_ASSERT(out.dtype() == dtype_of<Out>);
  constexpr std::array<DType, sizeof...(In)> in_dtypes{dtype_of<In>...};
  for (size_t k = 0; k < sizeof...(In); ++k) INGOT_INTERNAL_ASSERT(inputs[k]->dtype() == in_dtypes[k]);
  const auto it = make_iter<N>(ops);
  if (it.numel == 0) return;
  detail::elementwise_impl<Out, In...>(it, f, std::index_sequence_for<In...>{});
}

}  // namespace ingot::cpu
