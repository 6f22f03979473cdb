// ONNX translations of elementwise ops: unary math, binary arithmetic with ingot's type
// promotion (inputs are cast to the output dtype the shape function chose), comparisons,
// logical ops, where / masked_fill / clamp, casts and copies.
#include <cmath>

#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/onnx/translation.h"

namespace ingot::exporters::onnx {

namespace {

using lowering::compare_dtype;
using lowering::opmath;

// Tensor argument i as `dtype`.
std::string as(TranslationContext& cx, size_t i, DType dtype) {
  return cx.cast(cx.in(i), cx.in_dtype(i), dtype);
}

// --- unary -------------------------------------------------------------------------------

Translation unary(const char* onnx_op) {
  return [onnx_op](TranslationContext& cx) {
    cx.set_output(0, cx.op(onnx_op, {as(cx, 0, cx.out_dtype())}));
  };
}

void translate_rsqrt(TranslationContext& cx) {
  const DType t = opmath(cx.out_dtype());
  std::string r = cx.op("Reciprocal", {cx.op("Sqrt", {as(cx, 0, t)})});
  cx.set_output(0, cx.cast(r, t, cx.out_dtype()));
}

void translate_silu(TranslationContext& cx) {
  const DType t = opmath(cx.out_dtype());
  std::string x = as(cx, 0, t);
  cx.set_output(0, cx.cast(cx.op("Mul", {x, cx.op("Sigmoid", {x})}), t, cx.out_dtype()));
}

// gelu(x) = x/2 (1 + erf(x/sqrt(2))), or its tanh approximation (ONNX Gelu needs opset 20).
void translate_gelu(TranslationContext& cx) {
  const DType t = opmath(cx.out_dtype());
  std::string x = as(cx, 0, t);
  const std::string approximate = cx.opt_str(1).value_or("none");
  std::string inner;
  if (approximate == "tanh") {
    std::string x3 = cx.op("Mul", {cx.op("Mul", {x, x}), x});
    std::string poly = cx.op("Add", {x, cx.op("Mul", {x3, cx.scalar_const(0.044715, t)})});
    inner = cx.op("Tanh", {cx.op("Mul", {poly, cx.scalar_const(std::sqrt(2.0 / M_PI), t)})});
  } else if (approximate == "none") {
    inner = cx.op("Erf", {cx.op("Mul", {x, cx.scalar_const(M_SQRT1_2, t)})});
  } else {
    cx.unsupported("gelu approximate='" + approximate + "'");
  }
  std::string one_plus = cx.op("Add", {inner, cx.scalar_const(1.0, t)});
  std::string y = cx.op("Mul", {cx.op("Mul", {x, cx.scalar_const(0.5, t)}), one_plus});
  cx.set_output(0, cx.cast(y, t, cx.out_dtype()));
}

void translate_logical_not(TranslationContext& cx) {
  cx.set_output(0, cx.op("Not", {as(cx, 0, DType::Bool)}));
}

// A unary op computed in float for 16-bit outputs (ONNX Runtime lacks f16 kernels of
// the inverse trigonometric ops).
Translation unary_opmath(const char* onnx_op) {
  return [onnx_op](TranslationContext& cx) {
    const DType t = opmath(cx.out_dtype());
    cx.set_output(0, cx.cast(cx.op(onnx_op, {as(cx, 0, t)}), t, cx.out_dtype()));
  };
}

// ceil / floor / round: ONNX's take floats; integers are already whole (identity).
Translation rounding(const char* onnx_op) {
  return [onnx_op](TranslationContext& cx) {
    if (!is_floating(cx.out_dtype())) return cx.set_output(0, cx.op("Identity", {cx.in(0)}));
    unary_opmath(onnx_op)(cx);
  };
}

// isinf / isnan: ONNX's take floats; integer and bool inputs are tested as float32
// (every one finite, so all false).
Translation float_test(const char* onnx_op) {
  return [onnx_op](TranslationContext& cx) {
    const DType t = is_floating(cx.in_dtype(0)) ? opmath(cx.in_dtype(0)) : DType::F32;
    cx.set_output(0, cx.op(onnx_op, {as(cx, 0, t)}));
  };
}

// --- binary arithmetic -------------------------------------------------------------------

// other (tensor arg 1 or Scalar arg 1) as the output dtype, times alpha (arg 2) when != 1.
std::string other_times_alpha(TranslationContext& cx, bool other_is_tensor, bool has_alpha) {
  const DType t = cx.out_dtype();
  std::string other = other_is_tensor ? as(cx, 1, t) : cx.scalar(1, t);
  if (has_alpha) {
    auto alpha = cx.scalar_value(2);
    if (!alpha || *alpha != 1.0) other = cx.op("Mul", {other, cx.scalar(2, t)});
  }
  return other;
}

Translation add_sub(const char* onnx_op, bool other_is_tensor) {
  return [onnx_op, other_is_tensor](TranslationContext& cx) {
    std::string self = as(cx, 0, cx.out_dtype());
    cx.set_output(0, cx.op(onnx_op, {self, other_times_alpha(cx, other_is_tensor, true)}));
  };
}

Translation mul_div(const char* onnx_op, bool other_is_tensor) {
  return [onnx_op, other_is_tensor](TranslationContext& cx) {
    std::string self = as(cx, 0, cx.out_dtype());
    cx.set_output(0, cx.op(onnx_op, {self, other_times_alpha(cx, other_is_tensor, false)}));
  };
}

// div with rounding_mode None / "trunc" / "floor".
void translate_div_mode(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const auto mode = cx.opt_str(2);
  if (!mode) {
    cx.set_output(0, cx.op("Div", {as(cx, 0, t), as(cx, 1, t)}));
    return;
  }
  // Exact for the integers a double holds; ONNX integer Div truncates but has no floor.
  const DType work = is_floating(t) ? t : DType::F64;
  std::string q = cx.op("Div", {as(cx, 0, work), as(cx, 1, work)});
  if (*mode == "floor") {
    q = cx.op("Floor", {q});
  } else if (*mode == "trunc") {
    q = cx.op("Mul", {cx.op("Sign", {q}), cx.op("Floor", {cx.op("Abs", {q})})});
  } else {
    cx.unsupported("rounding_mode '" + *mode + "'");
  }
  cx.set_output(0, cx.cast(q, work, t));
}

void translate_pow_tensor_scalar(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Pow", {as(cx, 0, t), cx.scalar(1, t)}));
}
void translate_pow_tensor_tensor(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Pow", {as(cx, 0, t), as(cx, 1, t)}));
}
void translate_pow_scalar(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Pow", {cx.scalar(0, t), as(cx, 1, t)}));
}

// --- comparisons -------------------------------------------------------------------------

Translation compare(const char* onnx_op, bool negate, bool other_is_tensor) {
  return [onnx_op, negate, other_is_tensor](TranslationContext& cx) {
    const DType t = compare_dtype(cx, other_is_tensor);
    std::string a = as(cx, 0, t);
    std::string b = other_is_tensor ? as(cx, 1, t) : cx.scalar(1, t);
    std::string r = cx.op(onnx_op, {a, b});
    if (negate) r = cx.op("Not", {r});
    cx.set_output(0, r);
  };
}

Translation logical(const char* onnx_op) {
  return [onnx_op](TranslationContext& cx) {
    std::string r = cx.op(onnx_op, {as(cx, 0, DType::Bool), as(cx, 1, DType::Bool)});
    cx.set_output(0, cx.cast(r, DType::Bool, cx.out_dtype()));
  };
}

// --- selection ---------------------------------------------------------------------------

void translate_where(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Where", {as(cx, 0, DType::Bool), as(cx, 1, t), as(cx, 2, t)}));
}

void translate_masked_fill_scalar(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Where", {as(cx, 1, DType::Bool), cx.scalar(2, t), as(cx, 0, t)}));
}

void translate_masked_fill_tensor(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Where", {as(cx, 1, DType::Bool), as(cx, 2, t), as(cx, 0, t)}));
}

void translate_clamp(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  std::string x = as(cx, 0, t);
  if (!cx.is_none(1)) x = cx.op("Max", {x, cx.scalar(1, t)});
  if (!cx.is_none(2)) x = cx.op("Min", {x, cx.scalar(2, t)});
  cx.set_output(0, cx.is_none(1) && cx.is_none(2) ? cx.op("Identity", {x}) : x);
}

void translate_clamp_tensor(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  std::string x = as(cx, 0, t);
  if (!cx.is_none(1)) x = cx.op("Max", {x, as(cx, 1, t)});
  if (!cx.is_none(2)) x = cx.op("Min", {x, as(cx, 2, t)});
  cx.set_output(0, cx.is_none(1) && cx.is_none(2) ? cx.op("Identity", {x}) : x);
}

// --- casts and copies ----------------------------------------------------------------------

void translate_to_copy(TranslationContext& cx) {
  const DType from = cx.in_dtype(0), to = cx.out_dtype();
  cx.set_output(0, from == to ? cx.op("Identity", {cx.in(0)}) : cx.cast(cx.in(0), from, to));
}

void translate_clone(TranslationContext& cx) {
  cx.set_output(0, cx.op("Identity", {cx.in(0)}));
}

// copy(self, src): src broadcast to self's shape, in self's dtype.
void translate_copy(TranslationContext& cx) {
  std::string src = as(cx, 1, cx.out_dtype());
  cx.set_output(0, cx.op("Expand", {src, cx.shape_tensor(cx.out_info().sizes)}));
}

}  // namespace

INGOT_ONNX_TRANSLATION(abs, "abs", unary("Abs"));
INGOT_ONNX_TRANSLATION(neg, "neg", unary("Neg"));
INGOT_ONNX_TRANSLATION(cos, "cos", unary("Cos"));
INGOT_ONNX_TRANSLATION(sin, "sin", unary("Sin"));
INGOT_ONNX_TRANSLATION(exp, "exp", unary("Exp"));
INGOT_ONNX_TRANSLATION(log, "log", unary("Log"));
INGOT_ONNX_TRANSLATION(sqrt, "sqrt", unary("Sqrt"));
INGOT_ONNX_TRANSLATION(tanh, "tanh", unary("Tanh"));
INGOT_ONNX_TRANSLATION(sigmoid, "sigmoid", unary("Sigmoid"));
INGOT_ONNX_TRANSLATION(relu, "relu", unary("Relu"));
INGOT_ONNX_TRANSLATION(rsqrt, "rsqrt", translate_rsqrt);
INGOT_ONNX_TRANSLATION(silu, "silu", translate_silu);
INGOT_ONNX_TRANSLATION(gelu, "gelu", translate_gelu);
INGOT_ONNX_TRANSLATION(logical_not, "logical_not", translate_logical_not);
INGOT_ONNX_TRANSLATION(tan, "tan", unary_opmath("Tan"));
INGOT_ONNX_TRANSLATION(asin, "asin", unary_opmath("Asin"));
INGOT_ONNX_TRANSLATION(acos, "acos", unary_opmath("Acos"));
INGOT_ONNX_TRANSLATION(atan, "atan", unary_opmath("Atan"));
INGOT_ONNX_TRANSLATION(sinh, "sinh", unary_opmath("Sinh"));
INGOT_ONNX_TRANSLATION(cosh, "cosh", unary_opmath("Cosh"));
INGOT_ONNX_TRANSLATION(asinh, "asinh", unary_opmath("Asinh"));
INGOT_ONNX_TRANSLATION(acosh, "acosh", unary_opmath("Acosh"));
INGOT_ONNX_TRANSLATION(atanh, "atanh", unary_opmath("Atanh"));
INGOT_ONNX_TRANSLATION(erf, "erf", unary_opmath("Erf"));
INGOT_ONNX_TRANSLATION(ceil, "ceil", rounding("Ceil"));
INGOT_ONNX_TRANSLATION(floor, "floor", rounding("Floor"));
INGOT_ONNX_TRANSLATION(round, "round", rounding("Round"));  // half to even, as torch
INGOT_ONNX_TRANSLATION(sign, "sign", unary("Sign"));
INGOT_ONNX_TRANSLATION(isinf, "isinf", float_test("IsInf"));
INGOT_ONNX_TRANSLATION(isnan, "isnan", float_test("IsNaN"));

INGOT_ONNX_TRANSLATION(add_tensor, "add.Tensor", add_sub("Add", true));
INGOT_ONNX_TRANSLATION(add_scalar, "add.Scalar", add_sub("Add", false));
INGOT_ONNX_TRANSLATION(sub_tensor, "sub.Tensor", add_sub("Sub", true));
INGOT_ONNX_TRANSLATION(sub_scalar, "sub.Scalar", add_sub("Sub", false));
INGOT_ONNX_TRANSLATION(mul_tensor, "mul.Tensor", mul_div("Mul", true));
INGOT_ONNX_TRANSLATION(mul_scalar, "mul.Scalar", mul_div("Mul", false));
INGOT_ONNX_TRANSLATION(div_tensor, "div.Tensor", mul_div("Div", true));
INGOT_ONNX_TRANSLATION(div_scalar, "div.Scalar", mul_div("Div", false));
INGOT_ONNX_TRANSLATION(div_tensor_mode, "div.Tensor_mode", translate_div_mode);
INGOT_ONNX_TRANSLATION(pow_tensor_scalar, "pow.Tensor_Scalar", translate_pow_tensor_scalar);
INGOT_ONNX_TRANSLATION(pow_tensor_tensor, "pow.Tensor_Tensor", translate_pow_tensor_tensor);
INGOT_ONNX_TRANSLATION(pow_scalar, "pow.Scalar", translate_pow_scalar);

INGOT_ONNX_TRANSLATION(eq_tensor, "eq.Tensor", compare("Equal", false, true));
INGOT_ONNX_TRANSLATION(eq_scalar, "eq.Scalar", compare("Equal", false, false));
INGOT_ONNX_TRANSLATION(ne_tensor, "ne.Tensor", compare("Equal", true, true));
INGOT_ONNX_TRANSLATION(ne_scalar, "ne.Scalar", compare("Equal", true, false));
INGOT_ONNX_TRANSLATION(lt_tensor, "lt.Tensor", compare("Less", false, true));
INGOT_ONNX_TRANSLATION(lt_scalar, "lt.Scalar", compare("Less", false, false));
INGOT_ONNX_TRANSLATION(le_tensor, "le.Tensor", compare("LessOrEqual", false, true));
INGOT_ONNX_TRANSLATION(le_scalar, "le.Scalar", compare("LessOrEqual", false, false));
INGOT_ONNX_TRANSLATION(gt_tensor, "gt.Tensor", compare("Greater", false, true));
INGOT_ONNX_TRANSLATION(gt_scalar, "gt.Scalar", compare("Greater", false, false));
INGOT_ONNX_TRANSLATION(ge_tensor, "ge.Tensor", compare("GreaterOrEqual", false, true));
INGOT_ONNX_TRANSLATION(ge_scalar, "ge.Scalar", compare("GreaterOrEqual", false, false));
INGOT_ONNX_TRANSLATION(logical_and, "logical_and", logical("And"));
INGOT_ONNX_TRANSLATION(logical_or, "logical_or", logical("Or"));

INGOT_ONNX_TRANSLATION(where_self, "where.self", translate_where);
INGOT_ONNX_TRANSLATION(masked_fill_scalar, "masked_fill.Scalar", translate_masked_fill_scalar);
INGOT_ONNX_TRANSLATION(masked_fill_tensor, "masked_fill.Tensor", translate_masked_fill_tensor);
INGOT_ONNX_TRANSLATION(clamp, "clamp", translate_clamp);
INGOT_ONNX_TRANSLATION(clamp_tensor, "clamp.Tensor", translate_clamp_tensor);

INGOT_ONNX_TRANSLATION(to_copy, "_to_copy", translate_to_copy);
INGOT_ONNX_TRANSLATION(clone, "clone", translate_clone);
INGOT_ONNX_TRANSLATION(copy, "copy", translate_copy);

}  // namespace ingot::exporters::onnx
