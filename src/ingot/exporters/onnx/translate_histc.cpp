// ONNX translation of histc (ops/histc.cpp, torch.histc): a histogram of the elements
// in `bins` equal bins over [min, max], as a one-hot sum so the element count may be
// symbolic:
//   pos    = floor((x - lo) * bins / (hi - lo)), clamped to bins - 1     [n]
//   counts = ReduceSum(where(lo <= x <= hi, pos, -1)[:, None] == arange(bins), axis 0)
// in the kernel's arithmetic type (float32; float64 for a float64 input), the same order
// of operations, so each element lands in the bin torch puts it in. min == max takes
// the data's own range (widened by 1 on each side when that is a single value);
// elements outside the range and NaNs are not counted.
#include "ingot/exporters/onnx/translation.h"

namespace ingot::exporters::onnx {
namespace {

void translate_histc(TranslationContext& cx) {
  const DType a = cx.in_dtype(0) == DType::F64 ? DType::F64 : DType::F32;
  const int64_t bins = cx.int_(1);
  const std::optional<double> min_arg = cx.scalar_value(2), max_arg = cx.scalar_value(3);
  if (!min_arg || !max_arg) cx.unsupported("histc with a symbolic min / max");
  const std::string x =
      cx.op("Reshape", {cx.cast(cx.in(0), cx.in_dtype(0), a), cx.ints_const({-1})});  // [n]
  std::string lo, span, hi;
  if (*min_arg == *max_arg) {
    // The data's range, widened when it is one value (an empty input is not supported:
    // ReduceMin of nothing).
    lo = cx.op("ReduceMin", {x}, {attr("keepdims", int64_t(0))});
    hi = cx.op("ReduceMax", {x}, {attr("keepdims", int64_t(0))});
    const std::string same = cx.op("Equal", {lo, hi});
    const std::string one = cx.scalar_const(1.0, a);
    lo = cx.op("Where", {same, cx.op("Sub", {lo, one}), lo});
    hi = cx.op("Where", {same, cx.op("Add", {hi, one}), hi});
    span = cx.op("Sub", {hi, lo});
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
  std::string pos = cx.op("Mul", {cx.op("Sub", {x, lo}), cx.scalar_const(double(bins), a)});
  pos = cx.op("Floor", {cx.op("Div", {pos, span})});
  pos = cx.op("Min", {pos, cx.scalar_const(double(bins - 1), a)});
  const std::string inside =
      cx.op("And", {cx.op("GreaterOrEqual", {x, lo}), cx.op("LessOrEqual", {x, hi})});
  pos = cx.op("Where", {inside, pos, cx.scalar_const(-1.0, a)});  // NaN / outside -> -1
  pos = cx.cast(pos, a, DType::I64);
  const std::string bin_ids = cx.op("Range", {cx.sym0(sym::integer(0)), cx.sym0(sym::integer(bins)),
                                              cx.sym0(sym::integer(1))});  // [bins]
  const std::string hits =
      cx.op("Equal", {cx.op("Unsqueeze", {pos, cx.ints_const({1})}), bin_ids});  // [n, bins]
  const std::string counts = cx.op("ReduceSum", {cx.cast(hits, DType::Bool, a), cx.ints_const({0})},
                                   {attr("keepdims", int64_t(0))});
  cx.set_output(0, cx.cast(counts, a, cx.out_dtype()));
}

}  // namespace

INGOT_ONNX_TRANSLATION(histc, "histc", translate_histc);

}  // namespace ingot::exporters::onnx
