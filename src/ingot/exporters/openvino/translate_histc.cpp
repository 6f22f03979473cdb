// OpenVINO translation of histc (ops/histc.cpp, torch.histc): a histogram of the elements
// in `bins` equal bins over [min, max], as a one-hot sum so the element count may be
// symbolic (the algorithm of the ONNX translation, onnx/translate_histc.cpp):
//   pos    = floor((x - lo) * bins / (hi - lo)), clamped to bins - 1     [n]
//   counts = ReduceSum(select(lo <= x <= hi, pos, -1)[:, None] == range(bins), axis 0)
// in the kernel's arithmetic type (f32; f64 for an f64 input) and the same order of
// operations, so each element lands in the bin torch puts it in. min == max takes the
// data's own range (widened by 1 on each side when that is a single value); elements
// outside the range and NaNs are not counted.
#include "ingot/exporters/openvino/translation.h"

namespace ingot::exporters::openvino {
namespace {

void translate_histc(TranslationContext& cx) {
  const DType a = cx.in_dtype(0) == DType::F64 ? DType::F64 : DType::F32;
  const int64_t bins = cx.int_(1);
  const std::optional<double> min_arg = cx.scalar_value(2), max_arg = cx.scalar_value(3);
  if (!min_arg || !max_arg) cx.unsupported("histc with a symbolic min / max");
  const Value x = cx.op("Reshape", {cx.as(0, a), cx.ints_const({-1})});  // [n]
  Value lo, hi, span;
  if (*min_arg == *max_arg) {
    // The data's range, widened when it is one value (an empty input is not supported:
    // ReduceMin of nothing).
    lo = cx.op("ReduceMin", {x, cx.ints_const({0})}, {{"keep_dims", "false"}});
    hi = cx.op("ReduceMax", {x, cx.ints_const({0})}, {{"keep_dims", "false"}});
    const Value same = cx.binary("Equal", lo, hi);
    const Value one = cx.scalar_const(1.0, a);
    lo = cx.op("Select", {same, cx.binary("Subtract", lo, one), lo});
    hi = cx.op("Select", {same, cx.binary("Add", hi, one), hi});
    span = cx.binary("Subtract", hi, lo);
  } else if (a == DType::F32) {
    const float l = float(*min_arg), h = float(*max_arg);
    lo = cx.scalar_const(l, a);
    hi = cx.scalar_const(h, a);
    span = cx.scalar_const(h - l, a);  // hi - lo in float, as the kernel computes it
  } else {
    lo = cx.scalar_const(*min_arg, a);
    hi = cx.scalar_const(*max_arg, a);
    span = cx.scalar_const(*max_arg - *min_arg, a);
  }
  Value pos = cx.binary("Multiply", cx.binary("Subtract", x, lo), cx.scalar_const(double(bins), a));
  pos = cx.op("Floor", {cx.binary("Divide", pos, span)});
  pos = cx.binary("Minimum", pos, cx.scalar_const(double(bins - 1), a));
  const Value inside =
      cx.binary("LogicalAnd", cx.binary("GreaterEqual", x, lo), cx.binary("LessEqual", x, hi));
  pos = cx.op("Select", {inside, pos, cx.scalar_const(-1.0, a)});  // NaN / outside -> -1
  pos = cx.cast(pos, a, DType::I64);
  const Value bin_ids = cx.op(
      "Range", {cx.sym0(sym::integer(0)), cx.sym0(sym::integer(bins)), cx.sym0(sym::integer(1))},
      {{"output_type", "i64"}});  // [bins]
  const Value hits =
      cx.binary("Equal", cx.op("Unsqueeze", {pos, cx.ints_const({1})}), bin_ids);  // [n, bins]
  const Value counts = cx.op("ReduceSum", {cx.cast(hits, DType::Bool, a), cx.ints_const({0})},
                             {{"keep_dims", "false"}});  // [bins]
  cx.set_output(0, cx.cast(counts, a, cx.out_dtype()));
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(histc, "histc", translate_histc);

}  // namespace ingot::exporters::openvino
