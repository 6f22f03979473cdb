// ingot::quantized_linear -> OpenVINO compressed weights, the pattern the CPU plugin
// runs as a FullyConnected on compressed weights (decompression on the fly):
//
//   Const q (u8 [N, K] | u4 [N, G, gs]) -> Convert(f32) -> Subtract(Convert(zero point))
//     -> Multiply(scales f32 [N, 1] | [N, G, 1]) [-> Reshape [N, K]] -> MatMul(x, W^T)
//
// The packed parameters' Consts are re-labelled in place (u4 element type, grouped
// shape): the .bin holds the program's packed bytes once. OpenVINO's u4 order (element
// 2j in the low nibble) is ingot's. Zero points: the fixed 128 / 8 as a scalar u8 / u4
// Const, or the per-group uint8 zeros as u8 [N, G, 1].
#include <fmt/format.h>

#include "ingot/exporters/openvino/translation.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::openvino {

namespace {

// Re-labels the Const behind `v` (a packed parameter) with another element type / shape.
void relabel(TranslationContext& cx, Value v, const std::string& element_type,
             const std::vector<int64_t>& dims) {
  Layer& l = cx.g().layers().at(size_t(v.layer));
  if (l.type != "Const") cx.unsupported("a packed weight that is not a constant");
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(std::to_string(d));
  for (auto& [key, value] : l.attrs) {
    if (key == "element_type") value = element_type;
    if (key == "shape") value = fmt::format("{}", fmt::join(parts, ", "));
  }
  l.outputs.at(0).dims = dims;
}

void translate_quantized_linear(TranslationContext& cx) {
  if (cx.in_dtype(0) != DType::F32)
    cx.unsupported("quantised linears are exported for float32 activations only");
  const int64_t bits = cx.int_(5), group = cx.int_(6);
  const ir::ValueInfo& qi = cx.in_info(1);
  const int64_t n = qi.sizes[0].value(),
                k = bits == 4 ? qi.sizes[1].value() * 2 : qi.sizes[1].value();
  const int64_t groups = k / group;
  const bool grouped = groups > 1;
  // [N, K] or [N, G, gs]: the scales broadcast over the last dim.
  const std::vector<int64_t> wdims =
      grouped ? std::vector<int64_t>{n, groups, group} : std::vector<int64_t>{n, k};
  const std::vector<int64_t> sdims =
      grouped ? std::vector<int64_t>{n, groups, 1} : std::vector<int64_t>{n, 1};
  const Value q = cx.in(1);
  const std::string et = bits == 4 ? "u4" : "u8";
  relabel(cx, q, et, wdims);
  const Value scales = cx.in(2);
  relabel(cx, scales, "f32", sdims);
  Value zp;
  if (!cx.is_none(3)) {
    zp = cx.in(3);
    relabel(cx, zp, "u8", sdims);
  } else {
    zp = cx.constant(full({}, Scalar(int64_t(1) << (bits - 1)), DType::U8));
    if (bits == 4) relabel(cx, zp, "u4", {});
  }
  Value w = cx.op("Convert", {q}, {{"destination_type", "f32"}});
  Value z = cx.op("Convert", {zp}, {{"destination_type", "f32"}});
  w = cx.binary("Subtract", w, z);
  w = cx.binary("Multiply", w, scales);
  if (grouped) w = cx.op("Reshape", {w, cx.ints_const({n, k})}, {{"special_zero", "false"}});
  Value y = cx.op("MatMul", {cx.in(0), w}, {{"transpose_a", "false"}, {"transpose_b", "true"}});
  if (!cx.is_none(4)) y = cx.binary("Add", y, cx.in(4));
  cx.set_output(0, y);
}

INGOT_OPENVINO_TRANSLATION(quantized_linear, "ingot::quantized_linear", translate_quantized_linear);

}  // namespace

}  // namespace ingot::exporters::openvino
