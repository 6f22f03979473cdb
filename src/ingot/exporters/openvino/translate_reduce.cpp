// OpenVINO translations of reductions, softmax, cumsum, sort, topk and argmax / argmin
// (TopK with k = 1; stable, so ties give the first index as torch does).
#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/openvino/translation.h"

namespace ingot::exporters::openvino {

namespace {

using lowering::normalize_dim;

Value axis_scalar(TranslationContext& cx, int64_t axis) {
  return cx.constant(Tensor::scalar(axis));
}

// sum / mean / amax / amin over `dims_arg` (absent or empty: every dim).
Translation reduce(const char* type, std::optional<size_t> dims_arg,
                   std::optional<size_t> keepdim_arg) {
  return [=](TranslationContext& cx) {
    const DType t = cx.out_dtype();
    Value x = cx.as(0, t);
    const size_t rank = cx.in_rank(0);
    if (rank == 0) {
      cx.set_output(0, x);
      return;
    }
    std::vector<int64_t> axes;
    if (dims_arg) {
      if (auto d = cx.opt_ints(*dims_arg)) axes = *d;
    }
    if (axes.empty()) {
      for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
    }
    for (int64_t& a : axes) a = normalize_dim(a, rank);
    const bool keep = keepdim_arg && cx.boolean(*keepdim_arg);
    cx.set_output(0,
                  cx.op(type, {x, cx.ints_const(axes)}, {{"keep_dims", keep ? "true" : "false"}}));
  };
}

// TopK-11 over `axis`: (values, indices i64).
std::vector<Value> topk(TranslationContext& cx, Value x, Value k, int64_t axis, bool largest) {
  return cx.ops("TopK", {x, k}, 2,
                {{"axis", std::to_string(axis)},
                 {"mode", largest ? "max" : "min"},
                 {"sort", "value"},
                 {"index_element_type", "i64"},
                 {"stable", "true"}});
}

Translation arg_reduce(bool largest) {
  return [largest](TranslationContext& cx) {
    Value x = cx.in(0);
    int64_t axis = 0;
    if (auto d = cx.opt_expr(1)) {
      axis = normalize_dim(d->value(), cx.in_rank(0));
    } else {
      x = cx.op("Reshape", {x, cx.ints_const({-1})});
    }
    if (cx.in_rank(0) == 0) x = cx.op("Reshape", {x, cx.ints_const({1})});
    Value index = topk(cx, x, cx.constant(Tensor::scalar(int64_t(1))), axis, largest)[1];
    const bool keep = cx.opt_bool(2).value_or(false) && !cx.is_none(1) && cx.in_rank(0) > 0;
    if (!keep) index = cx.op("Squeeze", {index, cx.ints_const({axis})});
    cx.set_output(0, index);
  };
}

// _softmax(self, dim, half_to_float) / softmax.int(self, dim, dtype) and the log twins.
Translation softmax(const char* type) {
  return [type](TranslationContext& cx) {
    const int64_t axis = normalize_dim(cx.int_(1), cx.in_rank(0));
    cx.set_output(0, cx.op(type, {cx.as(0, cx.out_dtype())}, {{"axis", std::to_string(axis)}}));
  };
}

void translate_cumsum(TranslationContext& cx) {
  const int64_t axis = normalize_dim(cx.int_(1), cx.in_rank(0));
  cx.set_output(0, cx.op("CumSum", {cx.as(0, cx.out_dtype()), axis_scalar(cx, axis)},
                         {{"exclusive", "false"}, {"reverse", "false"}}));
}

// sort(self, dim, descending) / sort.stable(self, stable, dim, descending): a stable TopK
// over the whole dim.
Translation sort(size_t dim_arg, size_t descending_arg) {
  return [=](TranslationContext& cx) {
    if (cx.in_rank(0) == 0) {
      cx.set_output(0, cx.in(0));
      cx.set_output(1, cx.constant(Tensor::scalar(int64_t(0))));
      return;
    }
    const int64_t axis = normalize_dim(cx.int_(dim_arg), cx.in_rank(0));
    Value k = cx.sym0(cx.in_info(0).sizes[size_t(axis)]);
    auto outs = topk(cx, cx.in(0), k, axis, cx.boolean(descending_arg));
    cx.set_output(0, outs[0]);
    cx.set_output(1, outs[1]);
  };
}

void translate_topk(TranslationContext& cx) {
  const int64_t axis = normalize_dim(cx.int_(2), cx.in_rank(0));
  auto outs = topk(cx, cx.in(0), cx.sym0(cx.expr(1)), axis, cx.boolean(3));
  cx.set_output(0, outs[0]);
  cx.set_output(1, outs[1]);
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(sum, "sum", reduce("ReduceSum", std::nullopt, std::nullopt));
INGOT_OPENVINO_TRANSLATION(sum_dim, "sum.dim_IntList", reduce("ReduceSum", 1, 2));
INGOT_OPENVINO_TRANSLATION(mean, "mean", reduce("ReduceMean", std::nullopt, std::nullopt));
INGOT_OPENVINO_TRANSLATION(mean_dim, "mean.dim", reduce("ReduceMean", 1, 2));
INGOT_OPENVINO_TRANSLATION(amax, "amax", reduce("ReduceMax", 1, 2));
INGOT_OPENVINO_TRANSLATION(amin, "amin", reduce("ReduceMin", 1, 2));
INGOT_OPENVINO_TRANSLATION(argmax, "argmax", arg_reduce(true));
INGOT_OPENVINO_TRANSLATION(argmin, "argmin", arg_reduce(false));
INGOT_OPENVINO_TRANSLATION(softmax_core, "_softmax", softmax("SoftMax"));
INGOT_OPENVINO_TRANSLATION(softmax_int, "softmax.int", softmax("SoftMax"));
INGOT_OPENVINO_TRANSLATION(log_softmax_core, "_log_softmax", softmax("LogSoftmax"));
INGOT_OPENVINO_TRANSLATION(log_softmax_int, "log_softmax.int", softmax("LogSoftmax"));
INGOT_OPENVINO_TRANSLATION(cumsum, "cumsum", translate_cumsum);
INGOT_OPENVINO_TRANSLATION(sort, "sort", sort(1, 2));
INGOT_OPENVINO_TRANSLATION(sort_stable, "sort.stable", sort(2, 3));
INGOT_OPENVINO_TRANSLATION(topk, "topk", translate_topk);

}  // namespace ingot::exporters::openvino
