// OpenVINO translations of the neural-network ops: matrix products, linear, embedding,
// layer_norm (MVN-6 then scale and shift), rms_norm and scaled_dot_product_attention (as
// MatMul / SoftMax / MatMul, with grouped-query heads repeated and boolean masks applied
// with Select). 16-bit inputs of the norms and attention compute in float with one
// rounding at the end, like ingot's kernels.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/openvino/translation.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::openvino {

namespace {

using lowering::opmath;

Value matmul(TranslationContext& cx, Value a, Value b, bool transpose_b = false) {
  return cx.op("MatMul", {a, b},
               {{"transpose_a", "false"}, {"transpose_b", transpose_b ? "true" : "false"}});
}

void translate_matmul(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, matmul(cx, cx.as(0, t), cx.as(1, t)));
}

// linear(x, w [out, in], b?) = x @ w^T + b.
void translate_linear(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  Value y = matmul(cx, cx.as(0, t), cx.as(1, t), cx.in_rank(1) == 2);
  if (!cx.is_none(2)) y = cx.binary("Add", y, cx.as(2, t));
  cx.set_output(0, y);
}

// addmm(self, m1, m2, beta, alpha) = beta * self + alpha * (m1 @ m2).
void translate_addmm(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const double beta = cx.scalar_value(3).value_or(1.0), alpha = cx.scalar_value(4).value_or(1.0);
  Value prod = matmul(cx, cx.as(1, t), cx.as(2, t));
  if (alpha != 1.0) prod = cx.binary("Multiply", prod, cx.scalar_const(alpha, t));
  Value self = cx.as(0, t);
  if (beta != 1.0) self = cx.binary("Multiply", self, cx.scalar_const(beta, t));
  cx.set_output(0, beta == 0.0 ? prod : cx.binary("Add", prod, self));
}

void translate_embedding(TranslationContext& cx) {
  cx.set_output(0, cx.op("Gather", {cx.in(0), cx.in(1), cx.constant(Tensor::scalar(int64_t(0)))}));
}

std::vector<int64_t> trailing_axes(size_t rank, size_t k) {
  std::vector<int64_t> axes;
  for (size_t i = k; i >= 1; --i) axes.push_back(int64_t(rank - i));
  return axes;
}

// layer_norm(x, normalized_shape, weight?, bias?, eps) over the trailing dims.
void translate_layer_norm(TranslationContext& cx) {
  const DType out = cx.out_dtype(), t = opmath(out);
  const auto axes = trailing_axes(cx.in_rank(0), cx.ints(1).size());
  Value y = cx.op("MVN", {cx.as(0, t), cx.ints_const(axes)},
                  {{"eps", fmt::format("{}", cx.f64(4))},
                   {"normalize_variance", "true"},
                   {"eps_mode", "inside_sqrt"}});
  if (!cx.is_none(2)) y = cx.binary("Multiply", y, cx.as(2, t));
  if (!cx.is_none(3)) y = cx.binary("Add", y, cx.as(3, t));
  cx.set_output(0, cx.cast(y, t, out));
}

// rms_norm(x, normalized_shape, weight?, eps?) = x / sqrt(mean(x^2) + eps) * weight, eps
// defaulting to the compute type's epsilon.
void translate_rms_norm(TranslationContext& cx) {
  const DType x_dtype = cx.in_dtype(0);
  const DType work = x_dtype == DType::F64 ? DType::F64 : DType::F32;
  const double eps =
      cx.opt_f64(3).value_or(work == DType::F64 ? std::numeric_limits<double>::epsilon()
                                                : double(std::numeric_limits<float>::epsilon()));
  const auto axes = trailing_axes(cx.in_rank(0), cx.ints(1).size());
  const Value x = cx.as(0, work);
  Value mean_square = cx.op("ReduceMean", {cx.binary("Multiply", x, x), cx.ints_const(axes)},
                            {{"keep_dims", "true"}});  // [..., 1...]
  Value rms = cx.op("Sqrt", {cx.binary("Add", mean_square, cx.scalar_const(eps, work))});
  Value y = cx.binary("Multiply", x, cx.binary("Divide", cx.scalar_const(1.0, work), rms));
  if (!cx.is_none(2)) y = cx.binary("Multiply", y, cx.as(2, work));
  cx.set_output(0, cx.cast(y, work, cx.out_dtype()));
}

// Repeats each of the kv heads (dim -3) `rep` times: [.., Hkv, S, E] -> [.., Hkv*rep, S, E].
Value repeat_heads(TranslationContext& cx, Value x, const ir::ValueInfo& info, int64_t rep) {
  const auto& s = info.sizes;
  const size_t r = s.size();
  std::vector<sym::Expr> expanded(s.begin(), s.end());
  expanded.insert(expanded.begin() + long(r - 2), sym::integer(rep));  // [.., Hkv, rep, S, E]
  std::vector<sym::Expr> merged(s.begin(), s.end());
  merged[r - 3] = sym::mul(s[r - 3], sym::integer(rep));
  Value u = cx.op("Unsqueeze", {x, cx.ints_const({int64_t(r) - 2})});
  Value e = cx.op("Broadcast", {u, cx.shape_tensor(expanded)}, {{"mode", "numpy"}});
  return cx.op("Reshape", {e, cx.shape_tensor(merged)});
}

// scaled_dot_product_attention(q, k, v, attn_mask?, dropout_p, is_causal, scale?,
// enable_gqa): softmax(q k^T * scale + mask) v. Dropout is an inference no-op.
void translate_sdpa(TranslationContext& cx) {
  const DType out_t = cx.out_dtype();
  const DType t = opmath(out_t);
  const ir::ValueInfo &qi = cx.in_info(0), &ki = cx.in_info(1), &vi = cx.in_info(2);
  const size_t r = qi.sizes.size();
  if (r < 2) cx.unsupported("attention inputs of rank < 2");
  Value q = cx.as(0, t), k = cx.as(1, t), v = cx.as(2, t);
  if (cx.boolean(7) && r >= 3) {
    const sym::Expr hq = qi.sizes[r - 3], hk = ki.sizes[r - 3];
    if (!(hq == hk)) {
      if (!hq.is_integer() || !hk.is_integer() || hk.value() == 0 || hq.value() % hk.value() != 0)
        cx.unsupported("grouped-query attention with symbolic or indivisible head counts");
      const int64_t rep = hq.value() / hk.value();
      k = repeat_heads(cx, k, ki, rep);
      v = repeat_heads(cx, v, vi, rep);
    }
  }
  double scale;
  if (auto s = cx.opt_f64(6)) {
    scale = *s;
  } else {
    const sym::Expr e = qi.sizes[r - 1];
    if (!e.is_integer()) cx.unsupported("a symbolic head size without an explicit scale");
    scale = 1.0 / std::sqrt(double(e.value()));
  }
  Value scores = cx.binary("Multiply", matmul(cx, q, k, true), cx.scalar_const(scale, t));
  const Value neg_inf = cx.scalar_const(-std::numeric_limits<double>::infinity(), t);
  if (!cx.is_none(3)) {
    scores = cx.in_dtype(3) == DType::Bool ? cx.op("Select", {cx.in(3), scores, neg_inf})
                                           : cx.binary("Add", scores, cx.as(3, t));
  }
  if (cx.boolean(5)) {
    // Causal: key j is visible to query i when j <= i (top-left aligned, as torch).
    auto range = [&](const sym::Expr& n) {
      return cx.op("Range", {cx.sym0(sym::integer(0)), cx.sym0(n), cx.sym0(sym::integer(1))},
                   {{"output_type", "i64"}});
    };
    Value rows = cx.op("Unsqueeze", {range(qi.sizes[r - 2]), cx.ints_const({1})});
    Value cols = cx.op("Unsqueeze", {range(ki.sizes[r - 2]), cx.ints_const({0})});
    scores = cx.op("Select", {cx.binary("LessEqual", cols, rows), scores, neg_inf});
  }
  Value probs = cx.op("SoftMax", {scores}, {{"axis", "-1"}});
  if (!cx.is_none(3) || cx.boolean(5)) {
    // A fully masked row (a padded query under a sliding window) gives NaN; ingot's
    // kernel and torch's SDPA give zeros there, and a NaN would reach every later
    // query through the values of that position (0 * NaN).
    probs = cx.op("Select", {cx.op("IsNaN", {probs}), cx.scalar_const(0.0, t), probs});
  }
  cx.set_output(0, cx.cast(matmul(cx, probs, v), t, out_t));
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(mm, "mm", translate_matmul);
INGOT_OPENVINO_TRANSLATION(bmm, "bmm", translate_matmul);
INGOT_OPENVINO_TRANSLATION(matmul, "matmul", translate_matmul);
INGOT_OPENVINO_TRANSLATION(linear, "linear", translate_linear);
INGOT_OPENVINO_TRANSLATION(addmm, "addmm", translate_addmm);
INGOT_OPENVINO_TRANSLATION(embedding, "embedding", translate_embedding);
INGOT_OPENVINO_TRANSLATION(layer_norm, "layer_norm", translate_layer_norm);
INGOT_OPENVINO_TRANSLATION(rms_norm, "rms_norm", translate_rms_norm);
INGOT_OPENVINO_TRANSLATION(sdpa, "scaled_dot_product_attention", translate_sdpa);

}  // namespace ingot::exporters::openvino
