// ONNX translations of view and shape ops (reshape, expand, permute, slice, select,
// cat, split, ...) and of creation ops (arange, full, zeros, triangles). Target shapes
// come from the output metadata the shape function recorded (resolved: no -1), lowered
// with shape_tensor so symbolic sizes read the inputs that carry them.
#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/onnx/translation.h"

namespace ingot::exporters::onnx {

namespace {

using lowering::normalize_dim;

void translate_reshape(TranslationContext& cx) {
  const auto& sizes = cx.out_info().sizes;
  bool zero = false;
  for (const sym::Expr& e : sizes) zero = zero || (e.is_integer() && e.value() == 0);
  std::vector<AttributeProto> attrs;
  if (zero) attrs.push_back(attr("allowzero", int64_t(1)));  // a literal 0 is a size, not "copy"
  cx.set_output(0, cx.op("Reshape", {cx.in(0), cx.shape_tensor(sizes)}, std::move(attrs)));
}

void translate_expand(TranslationContext& cx) {
  cx.set_output(0, cx.op("Expand", {cx.in(0), cx.shape_tensor(cx.out_info().sizes)}));
}

void translate_permute(TranslationContext& cx) {
  std::vector<int64_t> perm = cx.ints(1);
  for (int64_t& d : perm) d = normalize_dim(d, cx.in_rank(0));
  cx.set_output(0, cx.op("Transpose", {cx.in(0)}, {attr("perm", perm)}));
}

void translate_transpose(TranslationContext& cx) {
  const std::vector<int64_t> perm =
      lowering::swap_permutation(cx.in_rank(0), cx.int_(1), cx.int_(2));
  cx.set_output(0, cx.op("Transpose", {cx.in(0)}, {attr("perm", perm)}));
}

void translate_unsqueeze(TranslationContext& cx) {
  const int64_t d = normalize_dim(cx.int_(1), cx.out_rank());
  cx.set_output(0, cx.op("Unsqueeze", {cx.in(0), cx.ints_const({d})}));
}

void translate_squeeze(TranslationContext& cx) {
  const std::vector<int64_t> axes = lowering::squeeze_axes(cx);
  cx.set_output(0, axes.empty() ? cx.op("Identity", {cx.in(0)})
                                : cx.op("Squeeze", {cx.in(0), cx.ints_const(axes)}));
}

std::string slice(TranslationContext& cx, const std::string& x, int64_t dim, const sym::Expr& start,
                  const sym::Expr& end, const sym::Expr& step) {
  return cx.op("Slice", {x, cx.sym1(start), cx.sym1(end), cx.ints_const({dim}), cx.sym1(step)});
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

void translate_select(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(1), cx.in_rank(0));
  cx.set_output(0, cx.op("Gather", {cx.in(0), cx.sym0(cx.expr(2))}, {attr("axis", dim)}));
}

void translate_cat(TranslationContext& cx) {
  auto values = cx.in_list(0);
  auto infos = cx.in_list_info(0);
  const DType t = cx.out_dtype();
  const int64_t dim = normalize_dim(cx.int_(1), cx.out_rank());
  std::vector<std::string> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    // torch.cat skips legacy empty 1-D tensors when the others have more dims.
    if (infos[i]->sizes.size() == 1 && infos[i]->sizes[0].is_integer() &&
        infos[i]->sizes[0].value() == 0 && cx.out_rank() != 1) {
      continue;
    }
    parts.push_back(cx.cast(*values[i], infos[i]->dtype, t));
  }
  cx.set_output(0, parts.size() == 1 ? cx.op("Identity", {parts[0]})
                                     : cx.op("Concat", parts, {attr("axis", dim)}));
}

void translate_stack(TranslationContext& cx) {
  auto values = cx.in_list(0);
  auto infos = cx.in_list_info(0);
  const DType t = cx.out_dtype();
  const int64_t dim = normalize_dim(cx.int_(1), cx.out_rank());
  std::vector<std::string> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    parts.push_back(
        cx.op("Unsqueeze", {cx.cast(*values[i], infos[i]->dtype, t), cx.ints_const({dim})}));
  }
  cx.set_output(0, parts.size() == 1 ? cx.op("Identity", {parts[0]})
                                     : cx.op("Concat", parts, {attr("axis", dim)}));
}

// split.Tensor / split_with_sizes / chunk: the piece sizes are the outputs' sizes.
void translate_split(TranslationContext& cx) {
  const int64_t dim = normalize_dim(cx.int_(2), cx.in_rank(0));
  std::vector<sym::Expr> sizes;
  for (size_t k = 0; k < cx.num_outputs(); ++k) sizes.push_back(cx.out_info(k).sizes[size_t(dim)]);
  auto outs =
      cx.ops("Split", {cx.in(0), cx.shape_tensor(sizes)}, cx.num_outputs(), {attr("axis", dim)});
  for (size_t k = 0; k < outs.size(); ++k) cx.set_output(k, outs[k]);
}

// --- creation ------------------------------------------------------------------------------

// arange(end) / arange.start(start, end) / arange.start_step(start, end, step).
Translation arange(size_t start_arg, size_t end_arg, size_t step_arg) {
  return [=](TranslationContext& cx) {
    const DType t = cx.out_dtype();
    std::string start = start_arg == size_t(-1) ? cx.scalar_const(0, t) : cx.scalar(start_arg, t);
    std::string end = cx.scalar(end_arg, t);
    std::string step = step_arg == size_t(-1) ? cx.scalar_const(1, t) : cx.scalar(step_arg, t);
    cx.set_output(0, cx.op("Range", {start, end, step}));
  };
}

// full / zeros / ones / empty: a scalar expanded to the size.
Translation filled(std::optional<double> value, size_t value_arg) {
  return [=](TranslationContext& cx) {
    const DType t = cx.out_dtype();
    std::string v = value ? cx.scalar_const(*value, t) : cx.scalar(value_arg, t);
    cx.set_output(0, cx.op("Expand", {v, cx.shape_tensor(cx.out_info().sizes)}));
  };
}

Translation triangle(bool upper) {
  return [upper](TranslationContext& cx) {
    cx.set_output(0,
                  cx.op("Trilu", {cx.in(0), cx.sym0(cx.expr(1))}, {attr("upper", int64_t(upper))}));
  };
}

}  // namespace

INGOT_ONNX_TRANSLATION(view, "view", translate_reshape);
INGOT_ONNX_TRANSLATION(reshape, "reshape", translate_reshape);
INGOT_ONNX_TRANSLATION(expand, "expand", translate_expand);
INGOT_ONNX_TRANSLATION(permute, "permute", translate_permute);
INGOT_ONNX_TRANSLATION(transpose, "transpose.int", translate_transpose);
INGOT_ONNX_TRANSLATION(unsqueeze, "unsqueeze", translate_unsqueeze);
INGOT_ONNX_TRANSLATION(squeeze, "squeeze", translate_squeeze);
INGOT_ONNX_TRANSLATION(squeeze_dim, "squeeze.dim", translate_squeeze);
INGOT_ONNX_TRANSLATION(squeeze_dims, "squeeze.dims", translate_squeeze);
INGOT_ONNX_TRANSLATION(slice, "slice.Tensor", translate_slice);
INGOT_ONNX_TRANSLATION(narrow, "narrow", translate_narrow);
INGOT_ONNX_TRANSLATION(select, "select.int", translate_select);
INGOT_ONNX_TRANSLATION(cat, "cat", translate_cat);
INGOT_ONNX_TRANSLATION(stack, "stack", translate_stack);
INGOT_ONNX_TRANSLATION(split, "split.Tensor", translate_split);
INGOT_ONNX_TRANSLATION(split_with_sizes, "split_with_sizes", translate_split);
INGOT_ONNX_TRANSLATION(chunk, "chunk", translate_split);

INGOT_ONNX_TRANSLATION(arange, "arange", arange(size_t(-1), 0, size_t(-1)));
INGOT_ONNX_TRANSLATION(arange_start, "arange.start", arange(0, 1, size_t(-1)));
INGOT_ONNX_TRANSLATION(arange_start_step, "arange.start_step", arange(0, 1, 2));
INGOT_ONNX_TRANSLATION(full, "full", filled(std::nullopt, 1));
INGOT_ONNX_TRANSLATION(zeros, "zeros", filled(0.0, 0));
INGOT_ONNX_TRANSLATION(ones, "ones", filled(1.0, 0));
INGOT_ONNX_TRANSLATION(empty, "empty.memory_format", filled(0.0, 0));
INGOT_ONNX_TRANSLATION(triu, "triu", triangle(true));
INGOT_ONNX_TRANSLATION(tril, "tril", triangle(false));

}  // namespace ingot::exporters::onnx
