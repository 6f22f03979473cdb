// Ops whose kernel takes other arguments than the op (dtype carried by the out tensor,
// extra defaults, list outputs), and ops composed of several portable kernels.
#include "ingot/exporters/executorch/kernels.h"

namespace ingot::exporters::executorch {

namespace {

using sym::Expr;

// clone(self) -> clone.out(self, memory_format=None, out)
INGOT_EXECUTORCH_KERNEL(clone, "clone", [](KernelContext& k) {
  k.call("aten::clone.out", {k.tensor(0), k.none()}, {k.out()});
});

// _to_copy(self, *, dtype) -> _to_copy.out(self, non_blocking=False, memory_format=None, out);
// the dtype is the out tensor's.
INGOT_EXECUTORCH_KERNEL(to_copy, "_to_copy", [](KernelContext& k) {
  k.call("aten::_to_copy.out", {k.tensor(0), k.bool_const(false), k.none()}, {k.out()});
});

// arange(end, dtype) -> arange.out(end, out); the start forms -> arange.start_out(start,
// end, step, out).
INGOT_EXECUTORCH_KERNEL(arange, "arange", [](KernelContext& k) {
  k.call("aten::arange.out", {k.scalar(0)}, {k.out()});
});
INGOT_EXECUTORCH_KERNEL(arange_start, "arange.start", [](KernelContext& k) {
  k.call("aten::arange.start_out", {k.scalar(0), k.scalar(1), k.int_const(1)}, {k.out()});
});
INGOT_EXECUTORCH_KERNEL(arange_start_step, "arange.start_step", [](KernelContext& k) {
  k.call("aten::arange.start_out", {k.scalar(0), k.scalar(1), k.scalar(2)}, {k.out()});
});

// full(size, fill, dtype) -> full.out(size, fill, out); ones / zeros (size, out); empty is
// zeros (deterministic memory).
INGOT_EXECUTORCH_KERNEL(full, "full", [](KernelContext& k) {
  k.call("aten::full.out", {k.int_list(0), k.scalar(1)}, {k.out()});
});
INGOT_EXECUTORCH_KERNEL(ones, "ones", [](KernelContext& k) {
  k.call("aten::ones.out", {k.int_list(0)}, {k.out()});
});
INGOT_EXECUTORCH_KERNEL(zeros, "zeros", [](KernelContext& k) {
  k.call("aten::zeros.out", {k.int_list(0)}, {k.out()});
});
INGOT_EXECUTORCH_KERNEL(empty, "empty.memory_format", [](KernelContext& k) {
  k.call("aten::zeros.out", {k.int_list(0)}, {k.out()});
});

// Full reductions: mean(self, dtype) -> mean.dtype_out(self, dtype, out);
// sum(self, dtype) -> sum.IntList_out(self, dim=None, keepdim=False, dtype, out).
INGOT_EXECUTORCH_KERNEL(mean_all, "mean", [](KernelContext& k) {
  k.call("aten::mean.dtype_out", {k.tensor(0), k.optional_dtype(1)}, {k.out()});
});
INGOT_EXECUTORCH_KERNEL(sum_all, "sum", [](KernelContext& k) {
  k.call("aten::sum.IntList_out", {k.tensor(0), k.none(), k.bool_const(false), k.optional_dtype(1)},
         {k.out()});
});

// layer_norm(input, normalized_shape, weight?, bias?, eps, cudnn_enable) ->
// native_layer_norm.out(input, normalized_shape, weight, bias, eps, out, mean, rstd); mean
// and rstd are temporaries of shape input[:-n] + [1] * n.
INGOT_EXECUTORCH_KERNEL(layer_norm, "layer_norm", [](KernelContext& k) {
  const ir::ValueInfo& x = k.in_info(0);
  const size_t n = std::get<std::vector<Expr>>(k.node().args.at(1)).size();
  std::vector<Expr> stat(x.sizes.begin(), x.sizes.end());
  for (size_t i = stat.size() - n; i < stat.size(); ++i) stat[i] = sym::integer(1);
  const int32_t mean = k.temp(x.dtype, stat), rstd = k.temp(x.dtype, stat);
  k.call("aten::native_layer_norm.out",
         {k.tensor(0), k.int_list(1), k.optional_tensor(2), k.optional_tensor(3), k.double_(4)},
         {k.out(), mean, rstd});
});

// narrow(self, dim, start, length) -> slice_copy(self, dim, start, start + length, 1).
INGOT_EXECUTORCH_KERNEL(narrow, "narrow", [](KernelContext& k) {
  const Expr start = std::get<Expr>(k.node().args.at(2));
  const Expr length = std::get<Expr>(k.node().args.at(3));
  k.call("aten::slice_copy.Tensor_out",
         {k.tensor(0), k.int_(1), k.int_(2), k.int_of(sym::add(start, length)), k.int_const(1)},
         {k.out()});
});

// split.Tensor / split_with_sizes / chunk: one slice_copy per piece. The portable
// split_copy kernels check their outputs' sizes instead of resizing them, which fails for
// dynamic shapes (seed 004 lists split_copy / chunk among ExecuTorch's workarounds);
// slice_copy resizes its out. Piece k spans [start_k, start_k + size_k) of `dim`, its size
// taken from the node's output k.
void slice_pieces(KernelContext& k, size_t dim_arg) {
  int64_t dim = std::get<Expr>(k.node().args.at(dim_arg)).value();
  if (dim < 0) dim += int64_t(k.in_info(0).sizes.size());
  Expr start = sym::integer(0);
  for (size_t o = 0; o < k.node().outputs.size(); ++o) {
    const Expr end = sym::add(start, k.out_info(o).sizes.at(size_t(dim)));
    k.call("aten::slice_copy.Tensor_out",
           {k.tensor(0), k.int_const(dim), k.int_of(start), k.int_of(end), k.int_const(1)},
           {k.out(o)});
    start = end;
  }
}
INGOT_EXECUTORCH_KERNEL(split, "split.Tensor", [](KernelContext& k) { slice_pieces(k, 2); });
INGOT_EXECUTORCH_KERNEL(split_with_sizes, "split_with_sizes",
                        [](KernelContext& k) { slice_pieces(k, 2); });
INGOT_EXECUTORCH_KERNEL(chunk, "chunk", [](KernelContext& k) { slice_pieces(k, 2); });

// item(t) -> the unbacked integer it binds: aten::_local_scalar_dense (a prim op).
INGOT_EXECUTORCH_KERNEL(item, "item", [](KernelContext& k) {
  k.call_prim("aten::_local_scalar_dense", {k.tensor(0), k.out()});
});

// nonzero(self) -> nonzero.out(self, out): the kernel counts the non-zero elements and
// resizes its out to [count, rank] (a DYNAMIC_BOUND tensor). The count is planned for its
// bound, every element of self.
INGOT_EXECUTORCH_KERNEL(nonzero, "nonzero", [](KernelContext& k) {
  k.call("aten::nonzero.out", {k.tensor(0)}, {k.out()});
});
INGOT_EXECUTORCH_SIZE_BOUNDS(nonzero, "nonzero", [](KernelContext& k) {
  int64_t elements = 1;
  for (const Expr& s : k.in_info(0).sizes) elements *= k.upper_bound(s);
  return std::vector<std::pair<Expr, int64_t>>{{k.out_info(0).sizes.at(0), elements}};
});

// silu(x) = x * sigmoid(x) (the portable set has no silu kernel).
INGOT_EXECUTORCH_KERNEL(silu, "silu", [](KernelContext& k) {
  const ir::ValueInfo& x = k.in_info(0);
  const int32_t s = k.temp(x.dtype, x.sizes);
  k.call("aten::sigmoid.out", {k.tensor(0)}, {s});
  k.call("aten::mul.out", {k.tensor(0), s}, {k.out()});
});

// masked_fill.Tensor(self, mask, value) = where(mask, value, self) (value is 0-d).
INGOT_EXECUTORCH_KERNEL(masked_fill_tensor, "masked_fill.Tensor", [](KernelContext& k) {
  k.call("aten::where.self_out", {k.tensor(1), k.tensor(2), k.tensor(0)}, {k.out()});
});

// index_copy(self, dim, index, source) = index_put(self, [None] * dim + [index], source).
INGOT_EXECUTORCH_KERNEL(index_copy, "index_copy", [](KernelContext& k) {
  int64_t dim = std::get<Expr>(k.node().args.at(1)).value();
  if (dim < 0) dim += int64_t(k.in_info(0).sizes.size());
  OptionalTensorListValue indices;
  for (int64_t d = 0; d < dim; ++d) indices.items.push_back(-1);
  indices.items.push_back(k.tensor(2));
  k.call("aten::index_put.out", {k.tensor(0), k.value(indices), k.tensor(3), k.bool_const(false)},
         {k.out()});
});

}  // namespace

}  // namespace ingot::exporters::executorch
