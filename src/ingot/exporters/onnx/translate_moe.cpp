// ONNX translation of moe_experts (mixture-of-experts experts, ops/moe.cpp) as a
// per-token gather of the chosen experts' weights followed by batched MatMuls, so only
// the selected experts are multiplied and no shape depends on the routing:
//   G = Concat_e(gate[e])          [E, I, H]   (initializers: folded once by the runtime)
//   Gs = Gather(G, index)          [T, k, I, H]
//   g = Gs @ x[:, None, :, None]   [T, k, I, 1]   (the same for up -> u)
//   y = Gather(D, index) @ (act(g) * u)            [T, k, H, 1]
//   out = ReduceSum(y[..., 0] * weight[..., None], axis 1)   [T, H]
// Computed in float32 (the CPU kernel's accumulation), then cast to the output dtype.
#include "ingot/exporters/onnx/translation.h"

namespace ingot::exporters::onnx {
namespace {

void translate_moe_experts(TranslationContext& cx) {
  const DType f = DType::F32;
  const std::string act = cx.opt_str(6).value_or("silu");
  auto stacked = [&](size_t arg) {  // Tensor[] of [r, c] -> [E, r, c] float32
    auto values = cx.in_list(arg);
    auto infos = cx.in_list_info(arg);
    std::vector<std::string> parts;
    for (size_t e = 0; e < values.size(); ++e) {
      parts.push_back(cx.op("Unsqueeze", {cx.cast(*values[e], infos[e]->dtype, f), cx.ints_const({0})}));
    }
    return cx.op("Concat", parts, {attr("axis", int64_t(0))});
  };
  const std::string x = cx.cast(cx.in(0), cx.in_dtype(0), f);
  const std::string index = cx.in(1);
  const std::string weight = cx.cast(cx.in(2), cx.in_dtype(2), f);
  const std::string column = cx.op("Unsqueeze", {x, cx.ints_const({1, 3})});  // [T, 1, H, 1]
  auto project = [&](size_t arg, const std::string& v) {  // Gather(W, index) @ v
    std::string chosen = cx.op("Gather", {stacked(arg), index}, {attr("axis", int64_t(0))});
    return cx.op("MatMul", {chosen, v});
  };
  std::string g = project(3, column), u = project(4, column);  // [T, k, I, 1]
  std::string a;
  if (act == "silu") {
    a = cx.op("Mul", {g, cx.op("Sigmoid", {g})});
  } else if (act == "gelu_tanh") {
    std::string g3 = cx.op("Mul", {cx.op("Mul", {g, g}), g});
    std::string poly = cx.op("Add", {g, cx.op("Mul", {g3, cx.scalar_const(0.044715, f)})});
    std::string t = cx.op("Tanh", {cx.op("Mul", {poly, cx.scalar_const(0.7978845608028654, f)})});
    a = cx.op("Mul", {cx.op("Mul", {g, cx.scalar_const(0.5, f)}),
                      cx.op("Add", {t, cx.scalar_const(1.0, f)})});
  } else {
    cx.unsupported("moe_experts activation '" + act + "'");
  }
  std::string y = project(5, cx.op("Mul", {a, u}));                       // [T, k, H, 1]
  y = cx.op("Squeeze", {y, cx.ints_const({3})});                          // [T, k, H]
  y = cx.op("Mul", {y, cx.op("Unsqueeze", {weight, cx.ints_const({2})})});
  std::string out = cx.op("ReduceSum", {y, cx.ints_const({1})}, {attr("keepdims", int64_t(0))});
  cx.set_output(0, cx.cast(out, f, cx.out_dtype()));
}

}  // namespace

INGOT_ONNX_TRANSLATION(moe_experts, "moe_experts", translate_moe_experts);

}  // namespace ingot::exporters::onnx
