// ONNX translations of reductions, softmax, cumsum, sort and topk.
#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/onnx/translation.h"

namespace ingot::exporters::onnx {

namespace {

using lowering::normalize_dim;

std::string as(TranslationContext& cx, size_t i, DType dtype) {
  return cx.cast(cx.in(i), cx.in_dtype(i), dtype);
}

// sum / mean / amax / amin over `dims_arg` (absent or empty: every dim).
Translation reduce(const char* onnx_op, std::optional<size_t> dims_arg,
                   std::optional<size_t> keepdim_arg) {
  return [=](TranslationContext& cx) {
    const DType t = cx.out_dtype();
    std::vector<std::string> inputs{as(cx, 0, t)};
    std::vector<int64_t> axes;
    if (dims_arg) {
      if (auto d = cx.opt_ints(*dims_arg)) axes = *d;
    }
    for (int64_t& a : axes) a = normalize_dim(a, cx.in_rank(0));
    if (!axes.empty()) inputs.push_back(cx.ints_const(axes));
    const bool keep = keepdim_arg && cx.boolean(*keepdim_arg);
    if (cx.in_rank(0) == 0) {
      cx.set_output(0, cx.op("Identity", {inputs[0]}));
      return;
    }
    cx.set_output(0, cx.op(onnx_op, inputs, {attr("keepdims", int64_t(keep))}));
  };
}

Translation arg_reduce(const char* onnx_op) {
  return [onnx_op](TranslationContext& cx) {
    std::string x = cx.in(0);
    int64_t axis = 0;
    if (auto d = cx.opt_expr(1)) {
      axis = normalize_dim(d->value(), cx.in_rank(0));
    } else {
      x = cx.op("Reshape", {x, cx.ints_const({-1})});
    }
    const bool keep = cx.opt_bool(2).value_or(false) && !cx.is_none(1);
    cx.set_output(0, cx.op(onnx_op, {x}, {attr("axis", axis), attr("keepdims", int64_t(keep))}));
  };
}

// _softmax(self, dim, half_to_float) / softmax.int(self, dim, dtype) and the log twins.
Translation softmax(const char* onnx_op) {
  return [onnx_op](TranslationContext& cx) {
    const int64_t axis = normalize_dim(cx.int_(1), cx.in_rank(0));
    cx.set_output(0, cx.op(onnx_op, {as(cx, 0, cx.out_dtype())}, {attr("axis", axis)}));
  };
}

void translate_cumsum(TranslationContext& cx) {
  const int64_t axis = normalize_dim(cx.int_(1), cx.in_rank(0));
  cx.set_output(0, cx.op("CumSum", {as(cx, 0, cx.out_dtype()), cx.ints_const({axis})}));
}

// sort(self, dim, descending) / sort.stable(self, stable, dim, descending): TopK over the
// whole dim. ONNX TopK returns equal values in index order, which is a stable sort.
Translation sort(size_t dim_arg, size_t descending_arg) {
  return [=](TranslationContext& cx) {
    const int64_t axis = normalize_dim(cx.int_(dim_arg), cx.in_rank(0));
    if (cx.in_rank(0) == 0) {
      cx.set_output(0, cx.op("Identity", {cx.in(0)}));
      cx.set_output(
          1, cx.op("Constant", {}, {attr("value", make_tensor("", Tensor::scalar(int64_t(0))))}));
      return;
    }
    std::string k = cx.sym1(cx.in_info(0).sizes[size_t(axis)]);
    auto outs = cx.ops("TopK", {cx.in(0), k}, 2,
                       {attr("axis", axis), attr("largest", int64_t(cx.boolean(descending_arg))),
                        attr("sorted", int64_t(1))});
    cx.set_output(0, outs[0]);
    cx.set_output(1, outs[1]);
  };
}

void translate_topk(TranslationContext& cx) {
  const int64_t axis = normalize_dim(cx.int_(2), cx.in_rank(0));
  auto outs = cx.ops(
      "TopK", {cx.in(0), cx.sym1(cx.expr(1))}, 2,
      {attr("axis", axis), attr("largest", int64_t(cx.boolean(3))), attr("sorted", int64_t(1))});
  cx.set_output(0, outs[0]);
  cx.set_output(1, outs[1]);
}

}  // namespace

INGOT_ONNX_TRANSLATION(sum, "sum", reduce("ReduceSum", std::nullopt, std::nullopt));
INGOT_ONNX_TRANSLATION(sum_dim, "sum.dim_IntList", reduce("ReduceSum", 1, 2));
INGOT_ONNX_TRANSLATION(mean, "mean", reduce("ReduceMean", std::nullopt, std::nullopt));
INGOT_ONNX_TRANSLATION(mean_dim, "mean.dim", reduce("ReduceMean", 1, 2));
INGOT_ONNX_TRANSLATION(amax, "amax", reduce("ReduceMax", 1, 2));
INGOT_ONNX_TRANSLATION(amin, "amin", reduce("ReduceMin", 1, 2));
INGOT_ONNX_TRANSLATION(argmax, "argmax", arg_reduce("ArgMax"));
INGOT_ONNX_TRANSLATION(argmin, "argmin", arg_reduce("ArgMin"));
INGOT_ONNX_TRANSLATION(softmax_core, "_softmax", softmax("Softmax"));
INGOT_ONNX_TRANSLATION(softmax_int, "softmax.int", softmax("Softmax"));
INGOT_ONNX_TRANSLATION(log_softmax_core, "_log_softmax", softmax("LogSoftmax"));
INGOT_ONNX_TRANSLATION(log_softmax_int, "log_softmax.int", softmax("LogSoftmax"));
INGOT_ONNX_TRANSLATION(cumsum, "cumsum", translate_cumsum);
INGOT_ONNX_TRANSLATION(sort, "sort", sort(1, 2));
INGOT_ONNX_TRANSLATION(sort_stable, "sort.stable", sort(2, 3));
INGOT_ONNX_TRANSLATION(topk, "topk", translate_topk);

}  // namespace ingot::exporters::onnx
