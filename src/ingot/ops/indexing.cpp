// Indexing along one dim: index_select, gather, scatter, index_copy, embedding.
// (index_put, the multi-dim advanced-indexing write, lives in index_put.cpp.)
//
// Shape functions only look at sizes and dtypes; kernels read every index first
// (index_utils.h) so that nothing is read or written out of bounds.
#include "ingot/ops/functional/indexing.h"

#include <cstring>

#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/cpu/loops.h"
#include "ingot/ops/index_utils.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

std::vector<OutputMeta> one(DType t, Shape s) {
  return {OutputMeta{t, std::move(s)}};
}

// A 0-d tensor seen as shape [1] (index ops treat a scalar like a one-element vector).
Tensor as_1d(const Tensor& t) {
  return t.dim() == 0 ? t.as_strided({1}, {1}, t.storage_offset()) : t;
}

// For every element of the iteration shape (the sizes of `a`, which `b` shares), calls
// fn(pa, pb, k) with pointers to the elements and k its flat row-major position.
// Threaded when `parallel`; pointers are bytes.
template <typename F>
void for_each_pair(const Tensor& a, const Tensor& b, bool parallel, F&& fn) {
  const auto it = cpu::make_iter<2>({&a, &b});
  if (it.numel == 0) return;
  auto run = [&](int64_t begin, int64_t end) {
    int64_t k = begin;
    cpu::iterate_range(
        it, begin, end,
        [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
          for (int64_t i = 0; i < n; ++i, ++k) fn(p[0] + i * s[0], p[1] + i * s[1], k);
        });
  };
  if (parallel)
    parallel_for(0, it.numel, cpu::kElementwiseGrain, run);
  else
    run(0, it.numel);
}

// --- index_select -----------------------------------------------------------------------

std::vector<OutputMeta> index_select_shape(const OpArgs& a) {
  const Tensor& self = a.tensor(0);
  const Tensor& index = a.tensor(2);
  const int64_t dim = wrap_dim(a.int_(1), self.dim(), a.name());
  check_index_dtype(index, a.name(), "index");
  INGOT_CHECK(index.dim() <= 1, ShapeError, "[{}] index must be 0-d or 1-d, got shape {}", a.name(),
              index.shape_string());
  if (self.dim() == 0) {
    INGOT_CHECK(bool(index.sym_numel() == 1), ShapeError,
                "[{}] index of a 0-d input must have one element, got shape {}", a.name(),
                index.shape_string());
    return one(self.dtype(), {});
  }
  Shape s = self.sym_sizes();
  s[size_t(dim)] = index.sym_numel();
  return one(self.dtype(), s);
}

// out[..., i, ...] = self[..., idx[i], ...] along dim, with `idx` already checked.
void select_rows(const Tensor& self, int64_t dim, const std::vector<int64_t>& idx,
                 const Tensor& out) {
  const int64_t n = int64_t(idx.size());
  if (out.numel() == 0) return;
  const size_t item = itemsize(self.dtype());
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  if (self.is_contiguous() && inner >= 16) {
    // Whole rows of `inner` elements: memcpy each. [outer, size(dim), inner]
    const int64_t outer = out.numel() / (n * inner);
    const int64_t rows_in = self.size(dim);
    const char* src = static_cast<const char*>(self.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    const size_t row_bytes = size_t(inner) * item;
    parallel_for(0, outer * n, std::max<int64_t>(1, cpu::kElementwiseGrain / inner),
                 [&](int64_t b, int64_t e) {
                   for (int64_t r = b; r < e; ++r) {
                     const int64_t o = r / n, i = r % n;
                     std::memcpy(dst + size_t(r) * row_bytes,
                                 src + size_t(o * rows_in + idx[size_t(i)]) * row_bytes, row_bytes);
                   }
                 });
    return;
  }
  // Any layout: walk the output, reading self at (position with dim's index replaced).
  const Tensor self_v =
      self.as_strided(out.sizes(), strides_without(self, dim), self.storage_offset());
  const int64_t dim_bytes = self.stride(dim) * int64_t(item);
  const IntShape out_sizes = out.sizes();
  int64_t inner_out = 1;
  for (int64_t d = dim + 1; d < out.dim(); ++d) inner_out *= out_sizes[size_t(d)];
  dispatch_by_size(item, [&]<typename U>() {
    for_each_pair(out, self_v, true, [&](char* po, char* ps, int64_t k) {
      const int64_t i = (k / inner_out) % n;
      *reinterpret_cast<U*>(po) = *reinterpret_cast<const U*>(ps + idx[size_t(i)] * dim_bytes);
    });
  });
}

void index_select_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor self = as_1d(a.tensor(0));
  const int64_t dim = wrap_dim(a.int_(1), self.dim(), a.name());
  auto idx = read_indices(a.tensor(2), self.size(dim), dim, a.name(), false);
  const Tensor o = out[0].dim() == 0 ? out[0].as_strided({1}, {1}, 0) : out[0];
  select_rows(self, dim, idx, o);
}

const OpRegistrar kIndexSelect(
    define_op("index_select(Tensor self, int dim, Tensor index) -> Tensor")
        .shape(index_select_shape)
        .cpu(index_select_kernel));

// --- gather / scatter ---------------------------------------------------------------------

}  // namespace

int64_t check_gather_scatter(const OpArgs& a, const Tensor* src) {
  const Tensor& self = a.tensor(0);
  const Tensor& index = a.tensor(2);
  const int64_t dim = wrap_dim(a.int_(1), self.dim(), a.name());
  check_index_dtype(index, a.name(), "index");
  INGOT_CHECK(std::max<int64_t>(index.dim(), 1) == std::max<int64_t>(self.dim(), 1), ShapeError,
              "[{}] index must have the same rank as self: index {} vs self {}", a.name(),
              index.shape_string(), self.shape_string());
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d != dim && self.dim() > 0) {
      INGOT_CHECK(bool(index.sym_size(d) <= self.sym_size(d)), ShapeError,
                  "[{}] index {} is larger than self {} in dim {} (only dim {} may differ)",
                  a.name(), index.shape_string(), self.shape_string(), d, dim);
    }
    if (src && src->dim() > 0) {
      INGOT_CHECK(bool(index.sym_size(d) <= src->sym_size(d)), ShapeError,
                  "[{}] index {} is larger than src {} in dim {}", a.name(), index.shape_string(),
                  src->shape_string(), d);
    }
  }
  if (src) {
    INGOT_CHECK(std::max<int64_t>(src->dim(), 1) == std::max<int64_t>(self.dim(), 1), ShapeError,
                "[{}] src must have the same rank as self: src {} vs self {}", a.name(),
                src->shape_string(), self.shape_string());
    INGOT_CHECK(src->dtype() == self.dtype(), DTypeError,
                "[{}] src dtype {} must equal self dtype {}", a.name(), src->dtype(), self.dtype());
  }
  return dim;
}

namespace {

void gather_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor self = as_1d(a.tensor(0));
  const Tensor index = as_1d(a.tensor(2));
  const int64_t dim = wrap_dim(a.int_(1), self.dim(), a.name());
  auto idx = read_indices(index, self.size(dim), dim, a.name(), false);
  if (idx.empty()) return;
  const Tensor o = out[0].dim() == 0 ? out[0].as_strided({1}, {1}, 0) : out[0];
  const Tensor self_v =
      self.as_strided(index.sizes(), strides_without(self, dim), self.storage_offset());
  const int64_t dim_bytes = self.stride(dim) * int64_t(itemsize(self.dtype()));
  dispatch_by_size(itemsize(self.dtype()), [&]<typename U>() {
    for_each_pair(o, self_v, true, [&](char* po, char* ps, int64_t k) {
      *reinterpret_cast<U*>(po) = *reinterpret_cast<const U*>(ps + idx[size_t(k)] * dim_bytes);
    });
  });
}

const OpRegistrar kGather(
    define_op("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor")
        .shape([](const OpArgs& a) {
          check_gather_scatter(a, nullptr);
          return one(a.tensor(0).dtype(), a.tensor(2).sym_sizes());
        })
        .cpu(gather_kernel));

// out = self; out[... idx ...] = src[...] (or the value) at every index position. Serial:
// with repeated indices the last write wins, as on torch's CPU.
void scatter_kernel(const OpArgs& a, std::span<const Tensor> out) {
  cpu::copy_cast(out[0], a.tensor(0));
  const Tensor index = as_1d(a.tensor(2));
  const Tensor o = as_1d(out[0]);
  const int64_t dim = wrap_dim(a.int_(1), o.dim(), a.name());
  auto idx = read_indices(index, o.size(dim), dim, a.name(), false);
  if (idx.empty()) return;
  const Tensor out_v = o.as_strided(index.sizes(), strides_without(o, dim), o.storage_offset());
  const int64_t dim_bytes = o.stride(dim) * int64_t(itemsize(o.dtype()));
  Tensor src;
  if (a[3].is(Value::Kind::Tensor)) {
    const Tensor s = as_1d(a.tensor(3));
    src = s.as_strided(index.sizes(), s.strides(), s.storage_offset());
  } else {
    src = Tensor::empty({}, o.dtype());
    INGOT_DISPATCH_ALL_TYPES(o.dtype(), a.name(),
                             [&]<typename T>() { *src.data<T>() = a.scalar(3).to<T>(); });
    src = src.as_strided(index.sizes(), IntShape(size_t(index.dim()), 0), 0);
  }
  dispatch_by_size(itemsize(o.dtype()), [&]<typename U>() {
    for_each_pair(out_v, src, false, [&](char* po, char* ps, int64_t k) {
      *reinterpret_cast<U*>(po + idx[size_t(k)] * dim_bytes) = *reinterpret_cast<const U*>(ps);
    });
  });
}

const OpRegistrar kScatterSrc(
    define_op("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& src = a.tensor(3);
          check_gather_scatter(a, &src);
          return one(a.tensor(0).dtype(), a.tensor(0).sym_sizes());
        })
        .cpu(scatter_kernel));
const OpRegistrar kScatterValue(
    define_op("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor")
        .shape([](const OpArgs& a) {
          check_gather_scatter(a, nullptr);
          return one(a.tensor(0).dtype(), a.tensor(0).sym_sizes());
        })
        .cpu(scatter_kernel));

// --- index_copy ---------------------------------------------------------------------------

std::vector<OutputMeta> index_copy_shape(const OpArgs& a) {
  const Tensor& self = a.tensor(0);
  const Tensor& index = a.tensor(2);
  const Tensor& source = a.tensor(3);
  const int64_t dim = wrap_dim(a.int_(1), self.dim(), a.name());
  check_index_dtype(index, a.name(), "index");
  INGOT_CHECK(index.dim() <= 1, ShapeError, "[{}] index must be 0-d or 1-d, got shape {}", a.name(),
              index.shape_string());
  INGOT_CHECK(source.dtype() == self.dtype(), DTypeError,
              "[{}] source dtype {} must equal self dtype {}", a.name(), source.dtype(),
              self.dtype());
  bool ok = std::max<int64_t>(source.dim(), 1) == std::max<int64_t>(self.dim(), 1);
  for (int64_t d = 0; ok && d < source.dim() && self.dim() > 0; ++d) {
    ok = bool(source.sym_size(d) == (d == dim ? index.sym_numel() : self.sym_size(d)));
  }
  if (source.dim() == 0 || self.dim() == 0) ok = ok && bool(index.sym_numel() == 1);
  INGOT_CHECK(ok, ShapeError,
              "[{}] source {} must have the shape of self {} with dim {} of size {} (the "
              "number of indices)",
              a.name(), source.shape_string(), self.shape_string(), dim, index.sym_numel().str());
  return one(self.dtype(), self.sym_sizes());
}

// Copies source[..., i, ...] into out[..., idx[i], ...]; the last copy wins on repeats.
void index_copy_into(const Tensor& out_any, const OpArgs& a) {
  const Tensor out = as_1d(out_any);
  const int64_t dim = wrap_dim(a.int_(1), out.dim(), a.name());
  auto idx = read_indices(a.tensor(2), out.size(dim), dim, a.name(), false);
  Tensor source = as_1d(a.tensor(3));
  if (source.shares_storage_with(out)) {  // in place with an aliasing source: snapshot it
    Tensor c = Tensor::empty(source.sizes(), source.dtype());
    cpu::copy_cast(c, source);
    source = c;
  }
  IntShape sizes = out.sizes();
  sizes.erase(sizes.begin() + dim);
  IntShape out_strides = out.strides(), src_strides = source.strides();
  out_strides.erase(out_strides.begin() + dim);
  src_strides.erase(src_strides.begin() + dim);
  for (size_t i = 0; i < idx.size(); ++i) {
    cpu::copy_cast(
        out.as_strided(sizes, out_strides, out.storage_offset() + idx[i] * out.stride(dim)),
        source.as_strided(sizes, src_strides,
                          source.storage_offset() + int64_t(i) * source.stride(dim)));
  }
}

const OpRegistrar kIndexCopy(
    define_op("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor")
        .shape(index_copy_shape)
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          cpu::copy_cast(out[0], a.tensor(0));
          index_copy_into(out[0], a);
        }));
const OpRegistrar kIndexCopyInplace(
    define_op("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)")
        .shape(index_copy_shape)
        .cpu([](const OpArgs& a, std::span<const Tensor> out) { index_copy_into(out[0], a); }));

// --- embedding ------------------------------------------------------------------------------

// Forward of embedding is a row lookup; padding_idx, scale_grad_by_freq and sparse only
// affect gradients.
const OpRegistrar kEmbedding(
    define_op("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
              "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& weight = a.tensor(0);
          const Tensor& indices = a.tensor(1);
          INGOT_CHECK(weight.dim() == 2, ShapeError,
                      "[{}] weight must be 2-D [num_embeddings, embedding_dim], got shape {}",
                      a.name(), weight.shape_string());
          check_index_dtype(indices, a.name(), "indices");
          Shape s = indices.sym_sizes();
          s.push_back(weight.sym_size(1));
          return one(weight.dtype(), s);
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const Tensor& weight = a.tensor(0);
          auto idx = read_indices(a.tensor(1), weight.size(0), 0, a.name(), false);
          // out viewed as [num_indices, embedding_dim]
          const int64_t n = int64_t(idx.size()), d = weight.size(1);
          select_rows(weight, 0, idx, out[0].as_strided({n, d}, {d, 1}, 0));
        }));

const OpHandle kIndexSelectOp("index_select"), kGatherOp("gather"), kScatterSrcOp("scatter.src"),
    kScatterValueOp("scatter.value"), kIndexCopyOp("index_copy"),
    kIndexCopyInplaceOp("index_copy_"), kEmbeddingOp("embedding");

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, std::source_location where) {
  CallSiteScope call_site(where);
  return kIndexSelectOp({self, dim, index})[0];
}
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, std::source_location where) {
  CallSiteScope call_site(where);
  return kGatherOp({self, dim, index})[0];
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::source_location where) {
  CallSiteScope call_site(where);
  return kScatterSrcOp({self, dim, index, src})[0];
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value, std::source_location where) {
  CallSiteScope call_site(where);
  return kScatterValueOp({self, dim, index, value})[0];
}
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::source_location where) {
  CallSiteScope call_site(where);
  return kIndexCopyOp({self, dim, index, source})[0];
}
Tensor index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::source_location where) {
  CallSiteScope call_site(where);
  return kIndexCopyInplaceOp({self, dim, index, source})[0];
}
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, std::source_location where) {
  CallSiteScope call_site(where);
  return kEmbeddingOp({weight, indices, padding_idx})[0];
}

}  // namespace ingot
