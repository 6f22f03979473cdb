// ONNX translations of the neural-network ops: matrix products, linear, embedding,
// layer_norm, rms_norm and scaled_dot_product_attention (as MatMul / Softmax / MatMul, with
// grouped-query heads repeated and boolean masks applied with Where).
#include <cmath>
#include <limits>

#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/onnx/translation.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::onnx {

namespace {

std::string as(TranslationContext& cx, size_t i, DType dtype) {
  return cx.cast(cx.in(i), cx.in_dtype(i), dtype);
}

void translate_matmul(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("MatMul", {as(cx, 0, t), as(cx, 1, t)}));
}

// linear(x, w [out, in], b?) = x @ w^T + b.
void translate_linear(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  std::string wt = cx.in_rank(1) == 2 ? cx.op("Transpose", {as(cx, 1, t)},
                                              {attr("perm", std::vector<int64_t>{1, 0})})
                                      : as(cx, 1, t);
  std::string y = cx.op("MatMul", {as(cx, 0, t), wt});
  if (!cx.is_none(2)) y = cx.op("Add", {y, as(cx, 2, t)});
  cx.set_output(0, y);
}

// addmm(self, m1, m2, beta, alpha) = beta * self + alpha * (m1 @ m2).
void translate_addmm(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const float beta = float(cx.scalar_value(3).value_or(1.0)),
              alpha = float(cx.scalar_value(4).value_or(1.0));
  cx.set_output(0, cx.op("Gemm", {as(cx, 1, t), as(cx, 2, t), as(cx, 0, t)},
                         {attr("alpha", alpha), attr("beta", beta)}));
}

void translate_embedding(TranslationContext& cx) {
  cx.set_output(0, cx.op("Gather", {cx.in(0), cx.in(1)}, {attr("axis", int64_t(0))}));
}

// layer_norm(x, normalized_shape, weight?, bias?, eps): LayerNormalization over the
// trailing len(normalized_shape) dims (opset 17).
void translate_layer_norm(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const std::vector<int64_t> shape = cx.ints(1);
  std::string scale =
      cx.is_none(2) ? cx.constant(ones(IntShape(shape.begin(), shape.end()), t)) : as(cx, 2, t);
  std::vector<std::string> inputs{as(cx, 0, t), scale};
  if (!cx.is_none(3)) inputs.push_back(as(cx, 3, t));
  cx.set_output(0,
                cx.op("LayerNormalization", inputs,
                      {attr("axis", -int64_t(shape.size())), attr("epsilon", float(cx.f64(4)))}));
}

// rms_norm(x, normalized_shape, weight?, eps?) as Mul / ReduceMean / Add / Sqrt /
// Reciprocal / Mul (ONNX has RMSNormalization only from opset 23), computing like
// ingot's kernel: in float32 for 16-bit inputs (float64 for float64), eps defaulting to
// the compute type's epsilon, one rounding at the end.
void translate_rms_norm(TranslationContext& cx) {
  const DType x_dtype = cx.in_dtype(0);
  const DType work = x_dtype == DType::F64 ? DType::F64 : DType::F32;
  const double eps =
      cx.opt_f64(3).value_or(work == DType::F64 ? std::numeric_limits<double>::epsilon()
                                                : double(std::numeric_limits<float>::epsilon()));
  const int64_t k = int64_t(cx.ints(1).size());
  std::vector<int64_t> axes;
  for (int64_t i = k; i >= 1; --i) axes.push_back(int64_t(cx.in_rank(0)) - i);
  const std::string x = as(cx, 0, work);
  std::string mean_square = cx.op("ReduceMean", {cx.op("Mul", {x, x}), cx.ints_const(axes)},
                                  {attr("keepdims", int64_t(1))});  // [..., 1...]
  std::string inv_rms = cx.op(
      "Reciprocal", {cx.op("Sqrt", {cx.op("Add", {mean_square, cx.scalar_const(eps, work)})})});
  std::string y = cx.op("Mul", {x, inv_rms});
  if (!cx.is_none(2)) y = cx.op("Mul", {y, as(cx, 2, work)});
  cx.set_output(0, cx.cast(y, work, cx.out_dtype()));
}

// Repeats each of the kv heads (dim -3) `rep` times: [.., Hkv, S, E] -> [.., Hkv*rep, S, E].
std::string repeat_heads(TranslationContext& cx, const std::string& x, const ir::ValueInfo& info,
                         int64_t rep) {
  const auto& s = info.sizes;
  const size_t r = s.size();
  std::vector<sym::Expr> expanded(s.begin(), s.end());
  expanded.insert(expanded.begin() + long(r - 2), sym::integer(rep));  // [.., Hkv, rep, S, E]
  std::vector<sym::Expr> merged(s.begin(), s.end());
  merged[r - 3] = sym::mul(s[r - 3], sym::integer(rep));
  std::string u = cx.op("Unsqueeze", {x, cx.ints_const({int64_t(r) - 2})});
  std::string e = cx.op("Expand", {u, cx.shape_tensor(expanded)});
  return cx.op("Reshape", {e, cx.shape_tensor(merged)});
}

// scaled_dot_product_attention(q, k, v, attn_mask?, dropout_p, is_causal, scale?,
// enable_gqa): softmax(q k^T * scale + mask) v. Dropout is an inference no-op.
void translate_sdpa(TranslationContext& cx) {
  // 16-bit inputs compute in float with one rounding at the end, like ingot's kernel.
  const DType out_t = cx.out_dtype();
  const DType t = lowering::opmath(out_t);
  const ir::ValueInfo &qi = cx.in_info(0), &ki = cx.in_info(1), &vi = cx.in_info(2);
  const size_t r = qi.sizes.size();
  if (r < 2) cx.unsupported("attention inputs of rank < 2");
  std::string q = as(cx, 0, t), k = as(cx, 1, t), v = as(cx, 2, t);
  if (cx.boolean(7) && r >= 3) {
    const sym::Expr hq = qi.sizes[r - 3], hk = ki.sizes[r - 3];
    if (!(hq == hk)) {
      if (!hq.is_integer() || !hk.is_integer() || hk.value() == 0 || hq.value() % hk.value() != 0) {
        cx.unsupported("grouped-query attention with symbolic or indivisible head counts");
      }
      const int64_t rep = hq.value() / hk.value();
      k = repeat_heads(cx, k, ki, rep);
      v = repeat_heads(cx, v, vi, rep);
    }
  }
  const sym::Expr e = qi.sizes[r - 1];
  double scale;
  if (auto s = cx.opt_f64(6)) {
    scale = *s;
  } else {
    if (!e.is_integer()) cx.unsupported("a symbolic head size without an explicit scale");
    scale = 1.0 / std::sqrt(double(e.value()));
  }
  std::vector<int64_t> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = int64_t(i);
  std::swap(perm[r - 1], perm[r - 2]);
  std::string kt = cx.op("Transpose", {k}, {attr("perm", perm)});
  std::string scores =
      cx.op("Mul", {cx.op("MatMul", {q, kt}), cx.scalar_const(scale, t)}, {}, "scores");
  const std::string neg_inf = cx.scalar_const(-std::numeric_limits<double>::infinity(), t);
  if (!cx.is_none(3)) {
    const DType mt = cx.in_dtype(3);
    scores = mt == DType::Bool ? cx.op("Where", {cx.in(3), scores, neg_inf})
                               : cx.op("Add", {scores, as(cx, 3, t)});
  }
  if (cx.boolean(5)) {
    // Causal: key j is visible to query i when j <= i (top-left aligned, as torch).
    std::string rows = cx.op(
        "Range", {cx.sym0(sym::integer(0)), cx.sym0(qi.sizes[r - 2]), cx.sym0(sym::integer(1))});
    std::string cols = cx.op(
        "Range", {cx.sym0(sym::integer(0)), cx.sym0(ki.sizes[r - 2]), cx.sym0(sym::integer(1))});
    std::string visible = cx.op("LessOrEqual", {cx.op("Unsqueeze", {cols, cx.ints_const({0})}),
                                                cx.op("Unsqueeze", {rows, cx.ints_const({1})})});
    scores = cx.op("Where", {visible, scores, neg_inf});
  }
  std::string probs = cx.op("Softmax", {scores}, {attr("axis", int64_t(-1))}, "probs");
  cx.set_output(0, cx.cast(cx.op("MatMul", {probs, v}), t, out_t));
}

}  // namespace

INGOT_ONNX_TRANSLATION(mm, "mm", translate_matmul);
INGOT_ONNX_TRANSLATION(bmm, "bmm", translate_matmul);
INGOT_ONNX_TRANSLATION(matmul, "matmul", translate_matmul);
INGOT_ONNX_TRANSLATION(linear, "linear", translate_linear);
INGOT_ONNX_TRANSLATION(addmm, "addmm", translate_addmm);
INGOT_ONNX_TRANSLATION(embedding, "embedding", translate_embedding);
INGOT_ONNX_TRANSLATION(layer_norm, "layer_norm", translate_layer_norm);
INGOT_ONNX_TRANSLATION(rms_norm, "rms_norm", translate_rms_norm);
INGOT_ONNX_TRANSLATION(sdpa, "scaled_dot_product_attention", translate_sdpa);

}  // namespace ingot::exporters::onnx
