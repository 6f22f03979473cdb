// OpenVINO translations of view and shape ops (reshape, expand, permute, slice, select,
// cat, split, ...) and of creation ops (arange, full, zeros, triangles). Target shapes
// come from the output metadata the shape function recorded (resolved: no -1), lowered
// with shape_tensor so symbolic sizes read the values that carry them.
#include <limits>

#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/openvino/translation.h"

namespace ingot::exporters::openvino {

namespace {

using lowering::normalize_dim;

Value zero_scalar(TranslationContext& cx) {
  return cx.constant(Tensor::scalar(int64_t(0)));
}

void translate_reshape(TranslationContext& cx) {
  cx.set_output(0, cx.op("Reshape", {cx.in(0), cx.shape_tensor(cx.out_info().sizes)}));
}

void translate_expand(TranslationContext& cx) {
  cx.set_output(
      0, cx.op("Broadcast", {cx.in(0), cx.shape_tensor(cx.out_info().sizes)}, {{"mode", "numpy"}}));
}

Value transpose(TranslationContext& cx, Value x, const std::vector<int64_t>& perm) {
  return cx.op("Transpose", {x, cx.ints_const(perm)});
}

void translate_permute(TranslationContext& cx) {
  std::vector<int64_t> perm = cx.ints(1);
  for (int64_t& d : perm) d = normalize_dim(d, cx.in_rank(0));
  cx.set_output(0, transpose(cx, cx.in(0), perm));
}

void translate_transpose(TranslationContext& cx) {
  if (cx.in_rank(0) == 0) return cx.set_output(0, cx.in(0));
  cx.set_output(0, transpose(cx, cx.in(0),
                             lowering::swap_permutation(cx.in_rank(0), cx.int_(1), cx.int_(2))));
}

void translate_unsqueeze(TranslationContext& cx) {
  const int64_t d = normalize_dim(cx.int_(1), cx.out_rank());
  cx.set_output(0, cx.op("Unsqueeze", {cx.in(0), cx.ints_const({d})}));
}

void translate_squeeze(TranslationContext& cx) {
  const std::vector<int64_t> axes = lowering::squeeze_axes(cx);
  cx.set_output(0, axes.empty() ? cx.in(0) : cx.op("Squeeze", {cx.in(0), cx.ints_const(axes)}));
}

// Slice-8: (data, start, stop, step, axes), each [1] here.
Value slice(TranslationContext& cx, Value x, int64_t dim, const sym::Expr& start,
            const sym::Expr& end, const sym::Expr& step) {
  return cx.op("Slice", {x, cx.sym1(start), cx.sym1(end), cx.sym1(step), cx.ints_const({dim})});
}

void translate_slice(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  const sym::Expr start = cx.opt_expr(2).value_or(sym::integer(0));
  const sym::Expr end = cx.opt_expr(3).value_or(sym::integer(std::numeric_limits<int64_t>::max()));
  cx.set_output(0, slice(cx, cx.in(0), dim, start, end, cx.expr(4)));
}

void translate_narrow(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  const sym::Expr start = cx.expr(2);
  cx.set_output(0, slice(cx, cx.in(0), dim, start, sym::add(start, cx.expr(3)), sym::integer(1)));
}

// select(x, dim, index): Gather-8 with a 0-d index (negative indices count from the end).
void translate_select(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  cx.set_output(0,
                cx.op("Gather", {cx.in(0), cx.sym0(cx.expr(2)), cx.constant(Tensor::scalar(dim))}));
}

void translate_cat(TranslationContext& cx) {
  auto values = cx.in_list(0);
  auto infos = cx.in_list_info(0);
  const DType t = cx.out_dtype();
  const int64_t dim = normalize_dim(cx.int_(1), cx.out_rank());
  std::vector<Value> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    // torch.cat skips legacy empty 1-D tensors when the others have more dims.
    if (infos[i]->sizes.size() == 1 && infos[i]->sizes[0].is_integer() &&
        infos[i]->sizes[0].value() == 0 && cx.out_rank() != 1) {
      continue;
    }
    parts.push_back(cx.cast(*values[i], infos[i]->dtype, t));
  }
  cx.set_output(
      0, parts.size() == 1 ? parts[0] : cx.op("Concat", parts, {{"axis", std::to_string(dim)}}));
}

void translate_stack(TranslationContext& cx) {
  auto values = cx.in_list(0);
  auto infos = cx.in_list_info(0);
  const DType t = cx.out_dtype();
  const int64_t dim = normalize_dim(cx.int_(1), cx.out_rank());
  std::vector<Value> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    parts.push_back(
        cx.op("Unsqueeze", {cx.cast(*values[i], infos[i]->dtype, t), cx.ints_const({dim})}));
  }
  cx.set_output(
      0, parts.size() == 1 ? parts[0] : cx.op("Concat", parts, {{"axis", std::to_string(dim)}}));
}

// split.Tensor / split_with_sizes / chunk: VariadicSplit with the outputs' sizes.
void translate_split(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(2), cx.in_rank(0));
  std::vector<sym::Expr> sizes;
  for (size_t k = 0; k < cx.num_outputs(); ++k) sizes.push_back(cx.out_info(k).sizes[size_t(dim)]);
  auto outs =
      cx.ops("VariadicSplit", {cx.in(0), cx.constant(Tensor::scalar(dim)), cx.shape_tensor(sizes)},
             cx.num_outputs());
  for (size_t k = 0; k < outs.size(); ++k) cx.set_output(k, outs[k]);
}

// --- creation ------------------------------------------------------------------------------

// arange(end) / arange.start(start, end) / arange.start_step(start, end, step): Range-4.
Translation arange(size_t start_arg, size_t end_arg, size_t step_arg) {
  return [=](TranslationContext& cx) {
    const DType t = cx.out_dtype();
    Value start = start_arg == size_t(-1) ? cx.scalar_const(0, t) : cx.scalar(start_arg, t);
    Value end = cx.scalar(end_arg, t);
    Value step = step_arg == size_t(-1) ? cx.scalar_const(1, t) : cx.scalar(step_arg, t);
    cx.set_output(0, cx.op("Range", {start, end, step},
                           {{"output_type", std::string(element_type_name(t))}}));
  };
}

// full / zeros / ones / empty: a scalar broadcast to the size.
Translation filled(std::optional<double> value, size_t value_arg) {
  return [=](TranslationContext& cx) {
    const DType t = cx.out_dtype();
    Value v = value ? cx.scalar_const(*value, t) : cx.scalar(value_arg, t);
    cx.set_output(
        0, cx.op("Broadcast", {v, cx.shape_tensor(cx.out_info().sizes)}, {{"mode", "numpy"}}));
  };
}

// triu / tril(x, k): x where (col - row >= k) / (col - row <= k), else 0. OpenVINO has no
// triangle op; rows and columns are Ranges over the last two dims.
Translation triangle(bool upper) {
  return [upper](TranslationContext& cx) {
    const auto& s = cx.in_info(0).sizes;
    const size_t r = s.size();
    if (r < 2) cx.unsupported("a triangle of a tensor of rank < 2");
    auto range = [&](const sym::Expr& n) {
      return cx.op("Range", {zero_scalar(cx), cx.sym0(n), cx.constant(Tensor::scalar(int64_t(1)))},
                   {{"output_type", "i64"}});
    };
    Value rows = cx.op("Unsqueeze", {range(s[r - 2]), cx.ints_const({1})});  // [H, 1]
    Value cols = cx.op("Unsqueeze", {range(s[r - 1]), cx.ints_const({0})});  // [1, W]
    Value diff = cx.binary("Subtract", cols, rows);                          // [H, W]
    Value k = cx.sym0(cx.expr(1));
    Value keep = cx.binary(upper ? "GreaterEqual" : "LessEqual", diff, k);
    Value zero = cx.scalar_const(0, cx.out_dtype());
    cx.set_output(0, cx.op("Select", {keep, cx.in(0), zero}));
  };
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(view, "view", translate_reshape);
INGOT_OPENVINO_TRANSLATION(reshape, "reshape", translate_reshape);
INGOT_OPENVINO_TRANSLATION(expand, "expand", translate_expand);
INGOT_OPENVINO_TRANSLATION(permute, "permute", translate_permute);
INGOT_OPENVINO_TRANSLATION(transpose, "transpose.int", translate_transpose);
INGOT_OPENVINO_TRANSLATION(unsqueeze, "unsqueeze", translate_unsqueeze);
INGOT_OPENVINO_TRANSLATION(squeeze, "squeeze", translate_squeeze);
INGOT_OPENVINO_TRANSLATION(squeeze_dim, "squeeze.dim", translate_squeeze);
INGOT_OPENVINO_TRANSLATION(squeeze_dims, "squeeze.dims", translate_squeeze);
INGOT_OPENVINO_TRANSLATION(slice, "slice.Tensor", translate_slice);
INGOT_OPENVINO_TRANSLATION(narrow, "narrow", translate_narrow);
INGOT_OPENVINO_TRANSLATION(select, "select.int", translate_select);
INGOT_OPENVINO_TRANSLATION(cat, "cat", translate_cat);
INGOT_OPENVINO_TRANSLATION(stack, "stack", translate_stack);
INGOT_OPENVINO_TRANSLATION(split, "split.Tensor", translate_split);
INGOT_OPENVINO_TRANSLATION(split_with_sizes, "split_with_sizes", translate_split);
INGOT_OPENVINO_TRANSLATION(chunk, "chunk", translate_split);

INGOT_OPENVINO_TRANSLATION(arange, "arange", arange(size_t(-1), 0, size_t(-1)));
INGOT_OPENVINO_TRANSLATION(arange_start, "arange.start", arange(0, 1, size_t(-1)));
INGOT_OPENVINO_TRANSLATION(arange_start_step, "arange.start_step", arange(0, 1, 2));
INGOT_OPENVINO_TRANSLATION(full, "full", filled(std::nullopt, 1));
INGOT_OPENVINO_TRANSLATION(zeros, "zeros", filled(0.0, 0));
INGOT_OPENVINO_TRANSLATION(ones, "ones", filled(1.0, 0));
INGOT_OPENVINO_TRANSLATION(empty, "empty.memory_format", filled(0.0, 0));
INGOT_OPENVINO_TRANSLATION(triu, "triu", triangle(true));
INGOT_OPENVINO_TRANSLATION(tril, "tril", triangle(false));

}  // namespace ingot::exporters::openvino
