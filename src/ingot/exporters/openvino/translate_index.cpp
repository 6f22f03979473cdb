// OpenVINO translations of indexing and functional writes: gather / index_select,
// ScatterElementsUpdate-12 for scatter, index_copy (the static KV cache write),
// select_scatter, slice_scatter and the common index_put forms; nonzero; item (binds a
// data-dependent symbol).
#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/openvino/translation.h"

namespace ingot::exporters::openvino {

namespace {

using lowering::normalize_dim;
using lowering::normalize_index;

Value axis_scalar(TranslationContext& cx, int64_t axis) {
  return cx.constant(Tensor::scalar(axis));
}

// A 1-D index laid along `dim` of a rank-`rank` tensor and broadcast to `sizes`: the
// ScatterElementsUpdate indices that write whole slices at those positions.
Value slices_at(TranslationContext& cx, Value index1d, int64_t dim, size_t rank,
                const std::vector<sym::Expr>& sizes) {
  std::vector<int64_t> shape(rank, 1);
  shape[size_t(dim)] = -1;
  Value laid = cx.op("Reshape", {index1d, cx.ints_const(shape)});
  return cx.op("Broadcast", {laid, cx.shape_tensor(sizes)}, {{"mode", "numpy"}});
}

Value scatter(TranslationContext& cx, Value self, Value indices, Value updates, int64_t dim,
              bool accumulate = false) {
  return cx.op("ScatterElementsUpdate", {self, indices, updates, axis_scalar(cx, dim)},
               {{"reduction", accumulate ? "sum" : "none"}, {"use_init_val", "true"}});
}

void translate_index_select(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  cx.set_output(0, cx.op("Gather", {cx.in(0), cx.in(2), axis_scalar(cx, dim)}));
}

void translate_gather(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  cx.set_output(0, cx.op("GatherElements", {cx.in(0), cx.in(2)}, {{"axis", std::to_string(dim)}}));
}

// scatter.src(self, dim, index, src): src is read over index's shape.
void translate_scatter_src(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  Value src = cx.as(3, t);
  if (cx.in_info(3).sizes != cx.in_info(2).sizes) {
    const size_t r = cx.in_rank(2);
    std::vector<int64_t> axes(r);
    for (size_t i = 0; i < r; ++i) axes[i] = int64_t(i);
    src = cx.op("Slice", {src, cx.ints_const(std::vector<int64_t>(r, 0)), cx.shape_of(cx.in(2)),
                          cx.ints_const(std::vector<int64_t>(r, 1)), cx.ints_const(axes)});
  }
  cx.set_output(0, scatter(cx, cx.as(0, t), cx.in(2), src, dim));
}

void translate_scatter_value(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  Value updates = cx.op("Broadcast", {cx.scalar(3, t), cx.shape_of(cx.in(2))}, {{"mode", "numpy"}});
  cx.set_output(0, scatter(cx, cx.as(0, t), cx.in(2), updates, dim));
}

// index_copy(self, dim, index [n], source): self with slices index[i] along dim replaced
// by source's slice i. The static cache's write of the new tokens' keys and values.
void translate_index_copy(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const size_t rank = cx.in_rank(0);
  if (rank == 0) cx.unsupported("index_copy of a 0-d tensor");
  const int64_t dim = normalize_dim(cx.int_(1), rank);
  Value indices = slices_at(cx, cx.in(2), dim, rank, cx.in_info(3).sizes);
  cx.set_output(0, scatter(cx, cx.as(0, t), indices, cx.as(3, t), dim));
}

// select_scatter(self, src, dim, index): self[..., index, ...] = src.
void translate_select_scatter(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const size_t rank = cx.in_rank(0);
  const int64_t dim = normalize_dim(cx.int_(2), rank);
  const sym::Expr index = normalize_index(cx.expr(3), cx.in_info(0).sizes[size_t(dim)]);
  Value updates = cx.op("Unsqueeze", {cx.as(1, t), cx.ints_const({dim})});
  std::vector<sym::Expr> sizes = cx.in_info(0).sizes;
  sizes[size_t(dim)] = sym::integer(1);
  Value indices = slices_at(cx, cx.sym1(index), dim, rank, sizes);
  cx.set_output(0, scatter(cx, cx.as(0, t), indices, updates, dim));
}

// slice_scatter(self, src, dim, start?, end?, step): self[start:end:step along dim] = src.
void translate_slice_scatter(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const size_t rank = cx.in_rank(0);
  const int64_t dim = normalize_dim(cx.int_(2), rank);
  const sym::Expr size = cx.in_info(0).sizes[size_t(dim)];
  const sym::Expr start = normalize_index(cx.opt_expr(3).value_or(sym::integer(0)), size);
  const sym::Expr step = cx.expr(5);
  const sym::Expr count = cx.in_info(1).sizes[size_t(dim)];
  Value positions = cx.op(
      "Range", {cx.sym0(start), cx.sym0(sym::add(start, sym::mul(count, step))), cx.sym0(step)},
      {{"output_type", "i64"}});
  Value indices = slices_at(cx, positions, dim, rank, cx.in_info(1).sizes);
  cx.set_output(0, scatter(cx, cx.as(0, t), indices, cx.as(1, t), dim));
}

// index_put(self, indices, values, accumulate) for the forms models use: one integer
// index tensor at some dim (the others None), or one bool mask over self's leading dims
// with a single value.
void translate_index_put(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const auto indices = cx.in_list(1);
  const auto infos = cx.in_list_info(1);
  const bool accumulate = cx.boolean(3);
  const size_t rank = cx.in_rank(0);
  int found = -1;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i]) continue;
    if (found >= 0) cx.unsupported("index_put with more than one index tensor");
    found = int(i);
  }
  if (found < 0) cx.unsupported("index_put without an index tensor");
  const ir::ValueInfo& index = *infos[size_t(found)];
  const Value self = cx.as(0, t);
  if (index.dtype == DType::Bool) {
    if (found != 0 || accumulate)
      cx.unsupported("index_put with a bool mask after other dims or accumulate");
    int64_t numel = 1;
    for (const sym::Expr& e : cx.in_info(2).sizes) numel = e.is_integer() ? numel * e.value() : -1;
    if (numel != 1) cx.unsupported("index_put with a bool mask and more than one value");
    Value mask = *indices[0];
    for (size_t d = index.sizes.size(); d < rank; ++d)
      mask = cx.op("Unsqueeze", {mask, cx.ints_const({int64_t(d)})});
    Value value = cx.op("Reshape", {cx.as(2, t), cx.ints_const({})});
    cx.set_output(0, cx.op("Select", {mask, value, self}));
    return;
  }
  if (index.sizes.size() != 1) cx.unsupported("index_put with an index tensor of rank != 1");
  const int64_t dim = found;
  std::vector<sym::Expr> sizes = cx.in_info(0).sizes;
  sizes[size_t(dim)] = index.sizes[0];
  Value idx = cx.cast(*indices[size_t(found)], index.dtype, DType::I64);
  // Negative indices count from the end, as in torch.
  Value n = cx.sym1(cx.in_info(0).sizes[size_t(dim)]);
  Value zero = cx.ints_const({0});
  idx = cx.op("Select", {cx.binary("Less", idx, zero), cx.binary("Add", idx, n), idx});
  Value updates = cx.op("Broadcast", {cx.as(2, t), cx.shape_tensor(sizes)}, {{"mode", "numpy"}});
  cx.set_output(0,
                scatter(cx, self, slices_at(cx, idx, dim, rank, sizes), updates, dim, accumulate));
}

// nonzero(x) -> [n, rank] i64 (NonZero-3 gives [rank, n]).
void translate_nonzero(TranslationContext& cx) {
  Value nz = cx.op("NonZero", {cx.in(0)}, {{"output_type", "i64"}});
  cx.set_output(0, cx.op("Transpose", {nz, cx.ints_const({1, 0})}));
}

// item(t): binds the node's unbacked symbol to t's value (i64 [1]).
void translate_item(TranslationContext& cx) {
  Value flat = cx.op("Reshape", {cx.in(0), cx.ints_const({1})});
  Value v = cx.cast(flat, cx.in_dtype(0), DType::I64);
  cx.g().info(v).dims = std::vector<int64_t>{1};
  cx.bind_symbol(cx.out_info().expr.name(), v);
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(index_select, "index_select", translate_index_select);
INGOT_OPENVINO_TRANSLATION(gather, "gather", translate_gather);
INGOT_OPENVINO_TRANSLATION(scatter_src, "scatter.src", translate_scatter_src);
INGOT_OPENVINO_TRANSLATION(scatter_value, "scatter.value", translate_scatter_value);
INGOT_OPENVINO_TRANSLATION(index_copy, "index_copy", translate_index_copy);
INGOT_OPENVINO_TRANSLATION(select_scatter, "select_scatter", translate_select_scatter);
INGOT_OPENVINO_TRANSLATION(slice_scatter, "slice_scatter", translate_slice_scatter);
INGOT_OPENVINO_TRANSLATION(index_put, "index_put", translate_index_put);
INGOT_OPENVINO_TRANSLATION(nonzero, "nonzero", translate_nonzero);
INGOT_OPENVINO_TRANSLATION(item, "item", translate_item);

}  // namespace ingot::exporters::openvino
