// Joining and splitting along a dim: cat, stack (copying), split, split_with_sizes,
// chunk (views of the input).
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/join.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

// torch.cat still accepts (and skips) the legacy empty tensor of shape [0] next to
// tensors of any rank.
bool is_legacy_empty(const Tensor& t) {
  return t.dim() == 1 && t.sym_size(0).maybe_int() == 0;
}

DType list_dtype(const TensorList& tensors) {
  DType t = tensors[0].dtype();
  for (size_t i = 1; i < tensors.size(); ++i) t = promote_types(t, tensors[i].dtype());
  return t;
}

// --- cat ---------------------------------------------------------------------------------

struct CatPlan {
  int64_t dim = 0;
  int first = -1;  // first input that takes part (not a legacy empty tensor), or -1
};

CatPlan cat_plan(const OpArgs& a) {
  const TensorList& ts = a.tensor_list(0);
  INGOT_CHECK(!ts.empty(), ValueError, "[{}] expected a non-empty list of tensors", a.name());
  CatPlan p;
  for (size_t i = 0; i < ts.size(); ++i) {
    INGOT_CHECK(ts[i].dim() > 0, ShapeError,
                "[{}] zero-dimensional tensor (at position {}) cannot be concatenated; "
                "unsqueeze it first or use stack",
                a.name(), i);
    if (p.first < 0 && !is_legacy_empty(ts[i])) p.first = int(i);
  }
  if (p.first < 0) return p;
  const Tensor& ref = ts[size_t(p.first)];
  p.dim = wrap_dim(a.int_(1), ref.dim(), a.name());
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (is_legacy_empty(t)) continue;
    INGOT_CHECK(t.dim() == ref.dim(), ShapeError,
                "[{}] tensors must have the same rank: tensor {} has shape {} but tensor {} "
                "has shape {}",
                a.name(), p.first, ref.shape_string(), i, t.shape_string());
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d == p.dim) continue;
      INGOT_CHECK(bool(t.sym_size(d) == ref.sym_size(d)), ShapeError,
                  "[{}] sizes must match except in dim {}: tensor {} has shape {} but tensor "
                  "{} has shape {} (dim {} differs)",
                  a.name(), p.dim, p.first, ref.shape_string(), i, t.shape_string(), d);
    }
  }
  return p;
}

std::vector<OutputMeta> cat_shape(const OpArgs& a) {
  const TensorList& ts = a.tensor_list(0);
  CatPlan p = cat_plan(a);
  const DType dtype = list_dtype(ts);
  if (p.first < 0) return {OutputMeta{dtype, {SymInt(0)}}};
  Shape s = ts[size_t(p.first)].sym_sizes();
  SymInt total = 0;
  for (const Tensor& t : ts) {
    if (!is_legacy_empty(t)) total = total + t.sym_size(p.dim);
  }
  s[size_t(p.dim)] = total;
  return {OutputMeta{dtype, s}};
}

// Copies each input into its slab of the (contiguous) output, converting dtypes.
void cat_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const TensorList& ts = a.tensor_list(0);
  CatPlan p = cat_plan(a);
  if (p.first < 0) return;
  const Tensor& o = out[0];
  const int64_t dim_stride = o.stride(p.dim);
  int64_t offset = 0;
  for (const Tensor& t : ts) {
    if (is_legacy_empty(t)) continue;
    const int64_t n = t.size(p.dim);
    if (n > 0 && t.numel() > 0) {
      cpu::copy_cast(o.as_strided(t.sizes(), o.strides(), offset * dim_stride), t);
    }
    offset += n;
  }
}

const OpRegistrar kCat(
    define_op("cat(Tensor[] tensors, int dim=0) -> Tensor").shape(cat_shape).cpu(cat_kernel));

// --- stack ---------------------------------------------------------------------------------

int64_t stack_dim(const OpArgs& a) {
  const TensorList& ts = a.tensor_list(0);
  INGOT_CHECK(!ts.empty(), ValueError, "[{}] expected a non-empty list of tensors", a.name());
  const Tensor& ref = ts[0];
  for (size_t i = 1; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    bool same = t.dim() == ref.dim();
    for (int64_t d = 0; same && d < t.dim(); ++d) same = bool(t.sym_size(d) == ref.sym_size(d));
    INGOT_CHECK(same, ShapeError,
                "[{}] stack expects each tensor to be equal size, but got {} at entry 0 and {} "
                "at entry {}",
                a.name(), ref.shape_string(), t.shape_string(), i);
  }
  return wrap_dim(a.int_(1), ref.dim() + 1, a.name());
}

const OpRegistrar kStack(define_op("stack(Tensor[] tensors, int dim=0) -> Tensor")
                             .shape([](const OpArgs& a) {
                               const TensorList& ts = a.tensor_list(0);
                               const int64_t dim = stack_dim(a);
                               Shape s = ts[0].sym_sizes();
                               s.insert(s.begin() + dim, SymInt(int64_t(ts.size())));
                               return std::vector<OutputMeta>{{list_dtype(ts), s}};
                             })
                             .cpu([](const OpArgs& a, std::span<const Tensor> out) {
                               const TensorList& ts = a.tensor_list(0);
                               const int64_t dim = stack_dim(a);
                               const Tensor& o = out[0];
                               if (o.numel() == 0) return;
                               // out.select(dim, i) for each input.
                               IntShape strides = o.strides();
                               const int64_t step = strides[size_t(dim)];
                               strides.erase(strides.begin() + dim);
                               for (size_t i = 0; i < ts.size(); ++i) {
                                 cpu::copy_cast(
                                     o.as_strided(ts[i].sizes(), strides, int64_t(i) * step),
                                     ts[i]);
                               }
                             }));

// --- split / split_with_sizes / chunk ----------------------------------------------------

// The sizes of the pieces along dim. The number of pieces must be a plain number, so a
// symbolic dim size is decided by its hint (recording a guard); the piece sizes stay
// symbolic where they can.
SymIntList split_sizes_for(const OpArgs& a, int64_t dim) {
  const Tensor& t = a.tensor(0);
  const SymInt& n = t.sym_size(dim);
  const std::string& op = a.op().schema.name;
  SymIntList sizes;
  if (op == "split_with_sizes") {
    sizes = a.sym_int_list(1);
    SymInt total = 0;
    for (const SymInt& s : sizes) {
      INGOT_CHECK(!(s.maybe_int() && *s.maybe_int() < 0), ValueError,
                  "[{}] split_sizes {} contains a negative size", a.name(), shape_str(sizes));
      total = total + s;
    }
    INGOT_CHECK(bool(total == n), ShapeError,
                "[{}] split_sizes {} sum to {} but dim {} of the input {} has size {}", a.name(),
                shape_str(sizes), total.str(), dim, t.shape_string(), n.str());
    return sizes;
  }
  SymInt split_size;
  int64_t count = 0;
  const int64_t n_val = n.guard_int();
  if (op == "chunk") {
    const int64_t chunks = a.int_(1);
    INGOT_CHECK(chunks > 0, ValueError, "[{}] chunks must be positive, got {}", a.name(), chunks);
    split_size = floordiv(n + (chunks - 1), SymInt(chunks));
    const int64_t ss = (n_val + chunks - 1) / chunks;
    if (ss == 0 && n_val == 0) {
      // chunk of an empty dim gives `chunks` empty pieces (torch.chunk).
      return SymIntList(size_t(chunks), SymInt(0));
    }
    count = (n_val + ss - 1) / ss;
  } else {  // split.Tensor
    split_size = a.sym_int(1);
    const int64_t ss = split_size.guard_int();
    INGOT_CHECK(ss >= 0, ValueError, "[{}] split_size must be non-negative, got {}", a.name(), ss);
    INGOT_CHECK(ss > 0 || n_val == 0, ValueError,
                "[{}] split_size can only be 0 if dim {} has size 0, but it has size {}", a.name(),
                dim, n_val);
    count = ss == 0 ? 1 : std::max<int64_t>((n_val + ss - 1) / ss, 1);
  }
  for (int64_t i = 0; i + 1 < count; ++i) sizes.push_back(split_size);
  sizes.push_back(n - split_size * SymInt(count - 1));
  return sizes;
}

int64_t split_dim(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  INGOT_CHECK(t.dim() > 0, ShapeError, "[{}] cannot split a 0-d tensor", a.name());
  return wrap_dim(a.int_(2), t.dim(), a.name());
}

std::vector<OutputMeta> split_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  const int64_t dim = split_dim(a);
  std::vector<OutputMeta> metas;
  for (const SymInt& s : split_sizes_for(a, dim)) {
    Shape piece = t.sym_sizes();
    piece[size_t(dim)] = s;
    metas.push_back(OutputMeta{t.dtype(), piece});
  }
  return metas;
}

std::vector<Tensor> split_view(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  const int64_t dim = split_dim(a);
  std::vector<Tensor> pieces;
  IntShape sizes = t.sizes();
  int64_t start = 0;
  for (const SymInt& s : split_sizes_for(a, dim)) {
    const int64_t len = s.expect_int();
    sizes[size_t(dim)] = len;
    const int64_t offset =
        len == 0 ? t.storage_offset() : t.storage_offset() + start * t.stride(dim);
    pieces.push_back(t.as_strided(sizes, t.strides(), offset));
    start += len;
  }
  return pieces;
}

const OpRegistrar kSplit(
    define_op("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
        .shape(split_shape)
        .view(split_view));
const OpRegistrar kSplitWithSizes(
    define_op("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> "
              "Tensor(a)[]")
        .shape(split_shape)
        .view(split_view));
const OpRegistrar kChunk(
    define_op("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]")
        .shape(split_shape)
        .view(split_view));

const OpHandle kCatOp("cat"), kStackOp("stack"), kSplitOp("split.Tensor"),
    kSplitWithSizesOp("split_with_sizes"), kChunkOp("chunk");

}  // namespace

Tensor cat(const TensorList& tensors, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return kCatOp({tensors, dim})[0];
}
Tensor stack(const TensorList& tensors, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return kStackOp({tensors, dim})[0];
}
std::vector<Tensor> split(const Tensor& t, SymInt split_size, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return kSplitOp({t, split_size, dim});
}
std::vector<Tensor> split(const Tensor& t, const SymIntList& split_sizes, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return split_with_sizes(t, split_sizes, dim);
}
std::vector<Tensor> split_with_sizes(const Tensor& t, const SymIntList& split_sizes, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return kSplitWithSizesOp({t, split_sizes, dim});
}
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim, std::source_location where) {
  CallSiteScope call_site(where);
  return kChunkOp({t, chunks, dim});
}

}  // namespace ingot
