// Ordering along a dim: sort (stable) and topk (partial selection).
//
// NaN orders as the largest value, as in torch. Ties keep the lower index first, so the
// results are deterministic (torch leaves the order of tied topk results unspecified).
#include "ingot/ops/functional/sort.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ingot/core/thread_pool.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

// Elements per thread below which row loops stay single-threaded.
constexpr int64_t kRowGrain = 1 << 15;

Tensor as_1d(const Tensor& t) {
  return t.dim() == 0 ? t.as_strided({1}, {1}, t.storage_offset()) : t;
}

// The rows of `t` along `dim`: row r's first element is at offset(r), its elements
// `stride` apart (elements, not bytes).
struct Rows {
  IntShape other_sizes, other_strides;  // the dims other than `dim`
  int64_t count = 1, len = 1, stride = 1;

  Rows(const Tensor& t, int64_t dim) {
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d == dim) continue;
      other_sizes.push_back(t.size(d));
      other_strides.push_back(t.stride(d));
      count *= t.size(d);
    }
    len = t.size(dim);
    stride = t.stride(dim);
  }
  int64_t offset(int64_t r) const {
    int64_t off = 0;
    for (size_t i = other_sizes.size(); i-- > 0;) {
      off += (r % other_sizes[i]) * other_strides[i];
      r /= other_sizes[i];
    }
    return off;
  }
};

// Runs fn(in_row, values_row, indices_row) over all rows in parallel; the rows of the
// outputs share their geometry (both contiguous with the same sizes).
template <typename T, typename F>
void for_each_row(const Tensor& in, const Tensor& values, const Tensor& indices, int64_t dim,
                  F&& fn) {
  const Rows in_rows(in, dim), out_rows(values, dim);
  const T* in_base = in.data<T>();
  T* v_base = values.data<T>();
  int64_t* i_base = indices.data<int64_t>();
  parallel_for(
      0, in_rows.count, std::max<int64_t>(1, kRowGrain / std::max<int64_t>(in_rows.len, 1)),
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t o = out_rows.offset(r);
          fn(in_base + in_rows.offset(r), in_rows.stride, v_base + o, i_base + o, out_rows.stride);
        }
      });
}

template <typename M>
bool is_nan(M v) {
  if constexpr (std::is_floating_point_v<M>)
    return std::isnan(v);
  else
    return false;
}

// Strict order "a comes before b" for (value, index) pairs: by value (NaN largest) in the
// requested direction, then by index.
template <typename M>
struct Before {
  bool largest_first;
  bool operator()(const std::pair<M, int64_t>& a, const std::pair<M, int64_t>& b) const {
    const bool na = is_nan(a.first), nb = is_nan(b.first);
    if (na || nb) {
      if (na && nb) return a.second < b.second;
      return largest_first ? na : nb;  // NaN is the largest value
    }
    if (a.first != b.first) return largest_first ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

// --- sort ---------------------------------------------------------------------------------------

struct SortArgs {
  int64_t dim;
  bool descending;
};

SortArgs sort_args(const OpArgs& a) {
  const size_t at = a.op().schema.overload == "stable" ? 2 : 1;
  return {wrap_dim(a.int_(at), a.tensor(0).dim(), a.name()), a.boolean(at + 1)};
}

void sort_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor in = as_1d(a.tensor(0));
  const SortArgs s = sort_args(a);
  const Tensor values = as_1d(out[0]), indices = as_1d(out[1]);
  if (values.numel() == 0) return;
  INGOT_DISPATCH_ALL_TYPES(in.dtype(), a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    const Before<M> before{s.descending};
    for_each_row<T>(in, values, indices, s.dim,
                    [&](const T* x, int64_t xs, T* v, int64_t* idx, int64_t os) {
                      const int64_t n = in.size(s.dim);
                      thread_local std::vector<std::pair<M, int64_t>> items;
                      items.resize(size_t(n));
                      for (int64_t j = 0; j < n; ++j) items[size_t(j)] = {M(x[j * xs]), j};
                      // Ties are broken by index, which makes the sort stable.
                      std::sort(items.begin(), items.end(), before);
                      for (int64_t j = 0; j < n; ++j) {
                        const int64_t src = items[size_t(j)].second;
                        v[j * os] = x[src * xs];
                        idx[j * os] = src;
                      }
                    });
  });
}

std::vector<OutputMeta> sort_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  sort_args(a);
  return {OutputMeta{t.dtype(), t.sym_sizes()}, OutputMeta{DType::I64, t.sym_sizes()}};
}

const OpRegistrar kSort(
    define_op("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
              "indices)")
        .shape(sort_shape)
        .cpu(sort_kernel));
// torch's stable=False only permits an unstable order; ingot always sorts stably.
const OpRegistrar kSortStable(
    define_op("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
              "(Tensor values, Tensor indices)")
        .shape(sort_shape)
        .cpu(sort_kernel));

// --- topk ---------------------------------------------------------------------------------------

std::vector<OutputMeta> topk_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  const int64_t dim = wrap_dim(a.int_(2), t.dim(), a.name());
  const SymInt& k = a.sym_int(1);
  const SymInt n = t.dim() == 0 ? SymInt(1) : t.sym_size(dim);
  INGOT_CHECK(!(k.maybe_int() && *k.maybe_int() < 0) && bool(k <= n), ValueError,
              "[{}] k ({}) is out of range: dim {} of the input {} has size {}", a.name(), k.str(),
              dim, t.shape_string(), n.str());
  Shape s = t.sym_sizes();
  if (!s.empty()) s[size_t(dim)] = k;
  return {OutputMeta{t.dtype(), s}, OutputMeta{DType::I64, s}};
}

// The k best of a row of n, best first. For k much smaller than n (a vocabulary-sized
// row), one pass keeps a heap of the k best so far: most elements cost one comparison
// with the heap's worst. Otherwise partial selection (nth_element) and a sort of the k.
template <typename T, typename M = opmath_t<T>>
void topk_row(const T* x, int64_t xs, int64_t n, int64_t k, const Before<M>& before,
              std::vector<std::pair<M, int64_t>>& buf) {
  buf.clear();
  if (k * 16 <= n) {
    buf.reserve(size_t(k));
    for (int64_t j = 0; j < k; ++j) buf.emplace_back(M(x[j * xs]), j);
    std::make_heap(buf.begin(), buf.end(), before);  // front: the worst of the k
    for (int64_t j = k; j < n; ++j) {
      const std::pair<M, int64_t> item{M(x[j * xs]), j};
      if (!before(item, buf.front())) continue;
      std::pop_heap(buf.begin(), buf.end(), before);
      buf.back() = item;
      std::push_heap(buf.begin(), buf.end(), before);
    }
    std::sort_heap(buf.begin(), buf.end(), before);
    return;
  }
  buf.resize(size_t(n));
  for (int64_t j = 0; j < n; ++j) buf[size_t(j)] = {M(x[j * xs]), j};
  if (k < n) std::nth_element(buf.begin(), buf.begin() + k, buf.end(), before);
  std::sort(buf.begin(), buf.begin() + k, before);
}

void topk_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor in = as_1d(a.tensor(0));
  const int64_t dim = wrap_dim(a.int_(2), in.dim(), a.name());
  const int64_t k = a.int_(1);
  const bool largest = a.boolean(3);
  const Tensor values = as_1d(out[0]), indices = as_1d(out[1]);
  if (values.numel() == 0) return;
  const int64_t n = in.size(dim);
  INGOT_DISPATCH_NUMERIC_TYPES(in.dtype(), a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    const Before<M> before{largest};
    for_each_row<T>(in, values, indices, dim,
                    [&](const T* x, int64_t xs, T* v, int64_t* idx, int64_t os) {
                      thread_local std::vector<std::pair<M, int64_t>> buf;
                      topk_row<T>(x, xs, n, k, before, buf);
                      for (int64_t j = 0; j < k; ++j) {
                        const int64_t src = buf[size_t(j)].second;
                        v[j * os] = x[src * xs];
                        idx[j * os] = src;
                      }
                    });
  });
}

const OpRegistrar kTopk(
    define_op("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
              "(Tensor values, Tensor indices)")
        .shape(topk_shape)
        .cpu(topk_kernel));

const OpHandle kSortOp("sort"), kTopkOp("topk");

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, std::source_location where) {
  CallSiteScope call_site(where);
  auto r = kSortOp({self, dim, descending});
  return {r[0], r[1]};
}
std::pair<Tensor, Tensor> topk(const Tensor& self, SymInt k, int64_t dim, bool largest,
                               bool sorted, std::source_location where) {
  CallSiteScope call_site(where);
  auto r = kTopkOp({self, k, dim, largest, sorted});
  return {r[0], r[1]};
}

}  // namespace ingot
