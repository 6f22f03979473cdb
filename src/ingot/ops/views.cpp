// View ops: view, reshape, transpose, permute, slice, select, narrow, expand,
// unsqueeze, squeeze. Each shape function works on SymInt sizes (export); each view
// function builds the eager alias from those sizes plus the input's strides.
#include <numeric>

#include "ingot/ops/functional/views.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

std::vector<OutputMeta> one(DType t, Shape s) { return {OutputMeta{t, std::move(s)}}; }

// --- view / reshape -----------------------------------------------------------------

// Replaces a single -1 in `size` so the element count matches `numel`.
Shape infer_size(const SymIntList& size, const SymInt& numel, std::string_view op,
                 const Tensor& t) {
  Shape out = size;
  int infer_at = -1;
  SymInt known = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i].maybe_int() == -1) {
      INGOT_CHECK(infer_at < 0, ValueError, "[{}] only one dim can be -1, got {}", op,
                  shape_str(size));
      infer_at = int(i);
    } else {
      INGOT_CHECK(!(size[i].maybe_int() && *size[i].maybe_int() < 0), ValueError,
                  "[{}] invalid size {} in {}", op, size[i].str(), shape_str(size));
      known = known * size[i];
    }
  }
  if (infer_at >= 0) {
    INGOT_CHECK(!(known.maybe_int() == 0), ValueError,
                "[{}] cannot infer the -1 in {} for a tensor of {} elements (shape {})", op,
                shape_str(size), numel.str(), t.shape_string());
    INGOT_CHECK(bool(numel % known == 0), ShapeError,
                "[{}] shape {} is invalid for input of shape {} ({} elements)", op,
                shape_str(size), t.shape_string(), numel.str());
    out[size_t(infer_at)] = floordiv(numel, known);
  } else {
    INGOT_CHECK(bool(known == numel), ShapeError,
                "[{}] shape {} is invalid for input of shape {} ({} elements)", op,
                shape_str(size), t.shape_string(), numel.str());
  }
  return out;
}

// Strides that view `t` as `new_sizes` without copying, or nullopt when the layout
// does not allow it (ATen's computeStride: chunks of dims that are contiguous among
// themselves can be regrouped).
std::optional<IntShape> view_strides(const Tensor& t, const IntShape& new_sizes) {
  const IntShape old_sizes = t.sizes();
  const IntShape& old_strides = t.strides();
  if (old_sizes.empty()) return IntShape(new_sizes.size(), 1);
  const int64_t numel = shape_numel(old_sizes);
  if (numel == 0) {
    if (old_sizes == new_sizes) return old_strides;
    return contiguous_strides(new_sizes);
  }
  IntShape new_strides(new_sizes.size(), 0);
  int64_t view_d = int64_t(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[size_t(d)];
    // End of a contiguous chunk: the next outer dim does not continue it.
    if (d == 0 || (old_sizes[size_t(d - 1)] != 1 &&
                   old_strides[size_t(d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[size_t(view_d)] == 1)) {
        new_strides[size_t(view_d)] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[size_t(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[size_t(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

std::vector<OutputMeta> view_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  return one(t.dtype(), infer_size(a.sym_int_list(1), t.sym_numel(), a.name(), t));
}

std::vector<Tensor> view_impl(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  IntShape sizes = to_int_shape(view_shape(a)[0].sizes);
  auto strides = view_strides(t, sizes);
  INGOT_CHECK(strides.has_value(), ShapeError,
              "[{}] view size {} is not compatible with the input's size {} and strides {} "
              "(at least one dim spans two contiguous subspaces); use reshape() instead",
              a.name(), shape_str(sizes), t.shape_string(), shape_str(t.strides()));
  return {t.as_strided(sizes, *strides, t.storage_offset())};
}

const OpRegistrar kView(define_op("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
                            .shape(view_shape)
                            .view(view_impl));

// reshape: a view when possible, else a contiguous copy (CompositeImplicit in ATen).
std::vector<Tensor> reshape_impl(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  IntShape sizes = to_int_shape(view_shape(a)[0].sizes);
  if (auto strides = view_strides(t, sizes)) {
    return {t.as_strided(sizes, *strides, t.storage_offset())};
  }
  Tensor c = clone(t);
  return {c.as_strided(sizes, contiguous_strides(sizes), 0)};
}

const OpRegistrar kReshape(define_op("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")
                               .shape(view_shape)
                               .view(reshape_impl));

// --- transpose / permute --------------------------------------------------------------

std::vector<OutputMeta> transpose_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  int64_t d0 = wrap_dim(a.int_(1), t.dim(), a.name());
  int64_t d1 = wrap_dim(a.int_(2), t.dim(), a.name());
  Shape s = t.sym_sizes();
  if (!s.empty()) std::swap(s[size_t(d0)], s[size_t(d1)]);
  return one(t.dtype(), s);
}

const OpRegistrar kTranspose(
    define_op("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
        .shape(transpose_shape)
        .view([](const OpArgs& a) -> std::vector<Tensor> {
          const Tensor& t = a.tensor(0);
          IntShape sizes = t.sizes(), strides = t.strides();
          if (!sizes.empty()) {
            int64_t d0 = wrap_dim(a.int_(1), t.dim(), a.name());
            int64_t d1 = wrap_dim(a.int_(2), t.dim(), a.name());
            std::swap(sizes[size_t(d0)], sizes[size_t(d1)]);
            std::swap(strides[size_t(d0)], strides[size_t(d1)]);
          }
          return {t.as_strided(sizes, strides, t.storage_offset())};
        }));

// Validated permutation with negative dims wrapped.
IntShape permutation(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  IntShape dims = a.int_list(1);
  INGOT_CHECK(int64_t(dims.size()) == t.dim(), ShapeError,
              "[{}] dims {} has {} entries but the input has rank {} (shape {})", a.name(),
              shape_str(dims), dims.size(), t.dim(), t.shape_string());
  std::vector<bool> seen(dims.size(), false);
  for (auto& d : dims) {
    d = wrap_dim(d, t.dim(), a.name());
    INGOT_CHECK(!seen[size_t(d)], ValueError, "[{}] dim {} repeats in {}", a.name(), d,
                shape_str(a.int_list(1)));
    seen[size_t(d)] = true;
  }
  return dims;
}

const OpRegistrar kPermute(
    define_op("permute(Tensor(a) self, int[] dims) -> Tensor(a)")
        .shape([](const OpArgs& a) {
          IntShape dims = permutation(a);
          Shape s;
          for (int64_t d : dims) s.push_back(a.tensor(0).sym_size(d));
          return one(a.tensor(0).dtype(), s);
        })
        .view([](const OpArgs& a) -> std::vector<Tensor> {
          const Tensor& t = a.tensor(0);
          IntShape dims = permutation(a), sizes, strides;
          for (int64_t d : dims) {
            sizes.push_back(t.size(d));
            strides.push_back(t.stride(d));
          }
          return {t.as_strided(sizes, strides, t.storage_offset())};
        }));

// --- slice / select / narrow ------------------------------------------------------------

// Clamped [start, end) of a Python slice along a dim of size `n` (step > 0).
std::pair<SymInt, SymInt> slice_bounds(const Value& start_v, const Value& end_v,
                                       const SymInt& n) {
  auto clamp = [&](const Value& v, const SymInt& dflt) -> SymInt {
    if (v.is_none()) return dflt;
    SymInt x = v.sym_int();
    if (auto c = x.maybe_int()) {
      int64_t i = *c;
      if (i < 0) return sym_max(n + i, 0);  // from the end
      if (auto nn = n.maybe_int()) return std::min(i, *nn);
      return sym_min(x, n);
    }
    return sym_min(x, n);
  };
  SymInt start = clamp(start_v, 0);
  SymInt end = sym_max(clamp(end_v, n), start);
  return {start, end};
}

std::vector<OutputMeta> slice_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  INGOT_CHECK(t.dim() > 0, ShapeError, "[{}] cannot slice a 0-d tensor", a.name());
  int64_t dim = wrap_dim(a.int_(1), t.dim(), a.name());
  SymInt step = a.sym_int(4);
  INGOT_CHECK(!(step.maybe_int() && *step.maybe_int() <= 0), ValueError,
              "[{}] slice step must be positive, got {}", a.name(), step.str());
  auto [start, end] = slice_bounds(a[2], a[3], t.sym_size(dim));
  Shape s = t.sym_sizes();
  s[size_t(dim)] = floordiv(end - start + step - 1, step);
  return one(t.dtype(), s);
}

const OpRegistrar kSlice(
    define_op("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
              "SymInt step=1) -> Tensor(a)")
        .shape(slice_shape)
        .view([](const OpArgs& a) -> std::vector<Tensor> {
          const Tensor& t = a.tensor(0);
          int64_t dim = wrap_dim(a.int_(1), t.dim(), a.name());
          int64_t start = slice_bounds(a[2], a[3], t.sym_size(dim)).first.expect_int();
          IntShape sizes = to_int_shape(slice_shape(a)[0].sizes);
          IntShape strides = t.strides();
          int64_t offset = t.storage_offset() + start * strides[size_t(dim)];
          strides[size_t(dim)] *= a.int_(4);
          return {t.as_strided(sizes, strides, sizes[size_t(dim)] == 0 ? t.storage_offset() : offset)};
        }));

// Index wrapped into [0, n); throws IndexError-like ValueError naming op and dim.
SymInt wrap_index(const SymInt& index, const SymInt& n, int64_t dim, std::string_view op) {
  if (auto i = index.maybe_int(); i && n.maybe_int()) {
    int64_t nn = *n.maybe_int();
    INGOT_CHECK(*i >= -nn && *i < nn, ValueError,
                "[{}] index {} is out of bounds for dim {} of size {}", op, *i, dim, nn);
    return *i < 0 ? *i + nn : *i;
  }
  return index;
}

std::vector<OutputMeta> select_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  INGOT_CHECK(t.dim() > 0, ShapeError, "[{}] cannot select from a 0-d tensor", a.name());
  int64_t dim = wrap_dim(a.int_(1), t.dim(), a.name());
  wrap_index(a.sym_int(2), t.sym_size(dim), dim, a.name());
  Shape s = t.sym_sizes();
  s.erase(s.begin() + dim);
  return one(t.dtype(), s);
}

const OpRegistrar kSelect(
    define_op("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
        .shape(select_shape)
        .view([](const OpArgs& a) -> std::vector<Tensor> {
          const Tensor& t = a.tensor(0);
          select_shape(a);
          int64_t dim = wrap_dim(a.int_(1), t.dim(), a.name());
          int64_t index = wrap_index(a.sym_int(2), t.sym_size(dim), dim, a.name()).expect_int();
          IntShape sizes = t.sizes(), strides = t.strides();
          int64_t offset = t.storage_offset() + index * strides[size_t(dim)];
          sizes.erase(sizes.begin() + dim);
          strides.erase(strides.begin() + dim);
          return {t.as_strided(sizes, strides, offset)};
        }));

// narrow(dim, start, length) == slice(dim, start, start + length), but out-of-range
// bounds are errors rather than clamped.
void check_narrow(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  int64_t dim = wrap_dim(a.int_(1), t.dim(), a.name());
  auto start = a.sym_int(2).maybe_int(), length = a.sym_int(3).maybe_int();
  auto n = t.sym_size(dim).maybe_int();
  if (start && length && n) {
    INGOT_CHECK(*start >= 0 && *length >= 0 && *start + *length <= *n, ValueError,
                "[{}] start {} + length {} exceeds dim {} of size {}", a.name(), *start,
                *length, dim, *n);
  }
}

const OpRegistrar kNarrow(
    define_op("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")
        .shape([](const OpArgs& a) {
          check_narrow(a);
          const Tensor& t = a.tensor(0);
          Shape s = t.sym_sizes();
          s[size_t(wrap_dim(a.int_(1), t.dim(), a.name()))] = a.sym_int(3);
          return one(t.dtype(), s);
        })
        .view([](const OpArgs& a) -> std::vector<Tensor> {
          check_narrow(a);
          return {slice(a.tensor(0), a.int_(1), a.sym_int(2), a.sym_int(2) + a.sym_int(3))};
        }));

// --- expand / unsqueeze / squeeze -------------------------------------------------------

std::vector<OutputMeta> expand_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  const SymIntList& size = a.sym_int_list(1);
  INGOT_CHECK(size.size() >= size_t(t.dim()), ShapeError,
              "[{}] the number of sizes {} must be at least the rank of the input {}", a.name(),
              shape_str(size), t.shape_string());
  const size_t lead = size.size() - size_t(t.dim());
  Shape out(size.size());
  for (size_t i = 0; i < size.size(); ++i) {
    if (i < lead) {
      INGOT_CHECK(!(size[i].maybe_int() && *size[i].maybe_int() < 0), ValueError,
                  "[{}] size -1 is not allowed in a new leading dim ({})", a.name(),
                  shape_str(size));
      out[i] = size[i];
      continue;
    }
    const SymInt& cur = t.sym_size(int64_t(i - lead));
    if (size[i].maybe_int() == -1) out[i] = cur;
    else if (cur.maybe_int() == 1) out[i] = size[i];
    else {
      INGOT_CHECK(bool(cur == size[i]), ShapeError,
                  "[{}] cannot expand {} to {}: dim {} has size {} (only size-1 dims expand)",
                  a.name(), t.shape_string(), shape_str(size), i - lead, cur.str());
      out[i] = cur;
    }
  }
  return one(t.dtype(), out);
}

const OpRegistrar kExpand(
    define_op("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)")
        .shape(expand_shape)
        .view([](const OpArgs& a) -> std::vector<Tensor> {
          const Tensor& t = a.tensor(0);
          IntShape sizes = to_int_shape(expand_shape(a)[0].sizes);
          const size_t lead = sizes.size() - size_t(t.dim());
          IntShape strides(sizes.size(), 0);
          for (size_t i = lead; i < sizes.size(); ++i) {
            int64_t d = int64_t(i - lead);
            strides[i] = (t.size(d) == 1 && sizes[i] != 1) ? 0 : t.stride(d);
          }
          return {t.as_strided(sizes, strides, t.storage_offset())};
        }));

const OpRegistrar kUnsqueeze(
    define_op("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)")
        .shape([](const OpArgs& a) {
          const Tensor& t = a.tensor(0);
          int64_t d = wrap_dim(a.int_(1), t.dim() + 1, a.name());
          Shape s = t.sym_sizes();
          s.insert(s.begin() + d, SymInt(1));
          return one(t.dtype(), s);
        })
        .view([](const OpArgs& a) -> std::vector<Tensor> {
          const Tensor& t = a.tensor(0);
          int64_t d = wrap_dim(a.int_(1), t.dim() + 1, a.name());
          IntShape sizes = t.sizes(), strides = t.strides();
          int64_t st = size_t(d) < sizes.size() ? sizes[size_t(d)] * strides[size_t(d)] : 1;
          sizes.insert(sizes.begin() + d, 1);
          strides.insert(strides.begin() + d, st);
          return {t.as_strided(sizes, strides, t.storage_offset())};
        }));

// Dims to drop for squeeze: the given ones that have size 1 (all size-1 dims when
// `dims` is empty and `all` is set).
std::vector<bool> squeezed_dims(const OpArgs& a, bool all) {
  const Tensor& t = a.tensor(0);
  std::vector<bool> drop(size_t(t.dim()), false);
  if (all) {
    for (int64_t d = 0; d < t.dim(); ++d) drop[size_t(d)] = t.sym_size(d).maybe_int() == 1;
  } else {
    IntShape dims = a[1].is(Value::Kind::Int) ? IntShape{a.int_(1)} : a.int_list(1);
    for (int64_t d : dims) {
      if (t.dim() == 0) continue;
      int64_t w = wrap_dim(d, t.dim(), a.name());
      drop[size_t(w)] = t.sym_size(w).maybe_int() == 1;
    }
  }
  return drop;
}

ViewFn squeeze_view(bool all) {
  return [all](const OpArgs& a) -> std::vector<Tensor> {
    const Tensor& t = a.tensor(0);
    auto drop = squeezed_dims(a, all);
    IntShape sizes, strides;
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (drop[size_t(d)]) continue;
      sizes.push_back(t.size(d));
      strides.push_back(t.stride(d));
    }
    return {t.as_strided(sizes, strides, t.storage_offset())};
  };
}

ShapeFn squeeze_shape(bool all) {
  return [all](const OpArgs& a) {
    const Tensor& t = a.tensor(0);
    auto drop = squeezed_dims(a, all);
    Shape s;
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (!drop[size_t(d)]) s.push_back(t.sym_size(d));
    }
    return one(t.dtype(), s);
  };
}

const OpRegistrar kSqueeze(define_op("squeeze(Tensor(a) self) -> Tensor(a)")
                               .shape(squeeze_shape(true))
                               .view(squeeze_view(true)));
const OpRegistrar kSqueezeDim(define_op("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)")
                                  .shape(squeeze_shape(false))
                                  .view(squeeze_view(false)));
const OpRegistrar kSqueezeDims(define_op("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)")
                                   .shape(squeeze_shape(false))
                                   .view(squeeze_view(false)));

const OpHandle kViewOp("view"), kReshapeOp("reshape"), kTransposeOp("transpose.int"),
    kPermuteOp("permute"), kSliceOp("slice.Tensor"), kSelectOp("select.int"),
    kNarrowOp("narrow"), kExpandOp("expand"), kUnsqueezeOp("unsqueeze"), kSqueezeOp("squeeze"),
    kSqueezeDimOp("squeeze.dim");

}  // namespace

Tensor view(const Tensor& t, const SymIntList& size, std::source_location where) {
  CallSiteScope call_site(where);
  return kViewOp({t, size})[0];
}
Tensor reshape(const Tensor& t, const SymIntList& shape, std::source_location where) {
  CallSiteScope call_site(where);
  return kReshapeOp({t, shape})[0];
}
Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim, std::source_location where) {
  CallSiteScope call_site(where);
  if (t.dim() == 0) return reshape(t, {SymInt(1)});
  int64_t s = wrap_dim(start_dim, t.dim(), "flatten"), e = wrap_dim(end_dim, t.dim(), "flatten");
  INGOT_CHECK(s <= e, ValueError, "[flatten] start_dim {} comes after end_dim {}", start_dim,
              end_dim);
  SymIntList sizes;
  SymInt merged = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < s || d > e) sizes.push_back(t.sym_size(d));
    else merged = merged * t.sym_size(d);
    if (d == e) sizes.push_back(merged);
  }
  return reshape(t, sizes);
}
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1, std::source_location where) {
  CallSiteScope call_site(where);
  return kTransposeOp({t, d0, d1})[0];
}
Tensor permute(const Tensor& t, const IntShape& dims, std::source_location where) {
  CallSiteScope call_site(where);
  return kPermuteOp({t, dims})[0];
}
Tensor slice(const Tensor& t, int64_t dim, std::optional<SymInt> start, std::optional<SymInt> end,
             SymInt step, std::source_location where) {
  CallSiteScope call_site(where);
  return kSliceOp({t, dim, Value(start), Value(end), step})[0];
}
Tensor select(const Tensor& t, int64_t dim, SymInt index, std::source_location where) {
  CallSiteScope call_site(where);
  return kSelectOp({t, dim, index})[0];
}
Tensor narrow(const Tensor& t, int64_t dim, SymInt start, SymInt length, std::source_location where) {
  CallSiteScope call_site(where);
  return kNarrowOp({t, dim, start, length})[0];
}
Tensor expand(const Tensor& t, const SymIntList& size, std::source_location where) {
  CallSiteScope call_site(where);
  return kExpandOp({t, size})[0];
}
Tensor unsqueeze(const Tensor& t, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return kUnsqueezeOp({t, dim})[0];
}
Tensor squeeze(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kSqueezeOp({t})[0];
}
Tensor squeeze(const Tensor& t, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return kSqueezeDimOp({t, dim})[0];
}

}  // namespace ingot
