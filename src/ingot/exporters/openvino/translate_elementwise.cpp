// OpenVINO translations of elementwise ops: unary math, binary arithmetic with ingot's
// type promotion (inputs converted to the output dtype the shape function chose),
// comparisons, logical ops, where / masked_fill / clamp, casts and copies. Binary ops
// broadcast numpy-style (auto_broadcast="numpy", set by the graph builder).
#include <cmath>

#include "ingot/exporters/lowering/translate_common.h"
#include "ingot/exporters/openvino/translation.h"

namespace ingot::exporters::openvino {

namespace {

using lowering::compare_dtype;
using lowering::opmath;

// --- unary -------------------------------------------------------------------------------

Translation unary(const char* type) {
  return
      [type](TranslationContext& cx) { cx.set_output(0, cx.op(type, {cx.as(0, cx.out_dtype())})); };
}

// A unary op computed in float for 16-bit inputs.
Translation unary_opmath(const char* type, Attributes attrs = {}) {
  return [type, attrs](TranslationContext& cx) {
    const DType t = opmath(cx.out_dtype());
    cx.set_output(0, cx.cast(cx.op(type, {cx.as(0, t)}, attrs), t, cx.out_dtype()));
  };
}

void translate_rsqrt(TranslationContext& cx) {
  const DType t = opmath(cx.out_dtype());
  Value r = cx.binary("Divide", cx.scalar_const(1.0, t), cx.op("Sqrt", {cx.as(0, t)}));
  cx.set_output(0, cx.cast(r, t, cx.out_dtype()));
}

// gelu(x, approximate): Gelu-7 with ERF or TANH.
void translate_gelu(TranslationContext& cx) {
  const std::string approximate = cx.opt_str(1).value_or("none");
  if (approximate != "none" && approximate != "tanh")
    cx.unsupported("gelu approximate='" + approximate + "'");
  const DType t = opmath(cx.out_dtype());
  Value y = cx.op("Gelu", {cx.as(0, t)},
                  {{"approximation_mode", approximate == "tanh" ? "TANH" : "ERF"}});
  cx.set_output(0, cx.cast(y, t, cx.out_dtype()));
}

void translate_logical_not(TranslationContext& cx) {
  cx.set_output(0, cx.op("LogicalNot", {cx.as(0, DType::Bool)}));
}

// ceil / floor / round on floats; integers are already whole (an Identity node: a Result
// fed straight by a Parameter would take over the input's tensor name).
Translation rounding(const char* type, Attributes attrs = {}) {
  return [type, attrs](TranslationContext& cx) {
    if (!is_floating(cx.out_dtype())) return cx.set_output(0, cx.op("Identity", {cx.in(0)}));
    unary_opmath(type, attrs)(cx);
  };
}

// isinf / isnan: integer and bool inputs are tested as float32 (all finite: false).
Translation float_test(const char* type) {
  return [type](TranslationContext& cx) {
    const DType t = is_floating(cx.in_dtype(0)) ? opmath(cx.in_dtype(0)) : DType::F32;
    cx.set_output(0, cx.op(type, {cx.as(0, t)}));
  };
}

// --- binary arithmetic -------------------------------------------------------------------

// other (tensor arg 1 or Scalar arg 1) as the output dtype, times alpha (arg 2) when != 1.
Value other_times_alpha(TranslationContext& cx, bool other_is_tensor, bool has_alpha) {
  const DType t = cx.out_dtype();
  Value other = other_is_tensor ? cx.as(1, t) : cx.scalar(1, t);
  if (has_alpha) {
    auto alpha = cx.scalar_value(2);
    if (!alpha || *alpha != 1.0) other = cx.binary("Multiply", other, cx.scalar(2, t));
  }
  return other;
}

Translation arithmetic(const char* type, bool other_is_tensor, bool has_alpha) {
  return [=](TranslationContext& cx) {
    Value self = cx.as(0, cx.out_dtype());
    cx.set_output(0, cx.binary(type, self, other_times_alpha(cx, other_is_tensor, has_alpha)));
  };
}

// div with rounding_mode None / "trunc" / "floor". Integer Divide floors with
// m_pythondiv="true" and truncates with "false"; floats round the quotient.
void translate_div_mode(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  const auto mode = cx.opt_str(2);
  Value a = cx.as(0, t), b = cx.as(1, t);
  if (!mode) {
    cx.set_output(0, cx.binary("Divide", a, b));
    return;
  }
  if (*mode != "floor" && *mode != "trunc") cx.unsupported("rounding_mode '" + *mode + "'");
  const bool floor = *mode == "floor";
  if (!is_floating(t)) {
    // Floor: (a - FloorMod(a, b)) / b, an exact division. OpenVINO's CPU plugin truncates
    // an integer Divide even with m_pythondiv (remainder fixtures with negative operands,
    // openvino 2026.4).
    if (floor) a = cx.binary("Subtract", a, cx.binary("FloorMod", a, b));
    cx.set_output(0, cx.op("Divide", {a, b}, {{"m_pythondiv", floor ? "true" : "false"}}));
    return;
  }
  Value q = cx.binary("Divide", a, b);
  q = floor ? cx.op("Floor", {q})
            : cx.binary("Multiply", cx.op("Sign", {q}), cx.op("Floor", {cx.op("Abs", {q})}));
  cx.set_output(0, q);
}

void translate_pow_tensor_scalar(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.binary("Power", cx.as(0, t), cx.scalar(1, t)));
}
void translate_pow_tensor_tensor(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.binary("Power", cx.as(0, t), cx.as(1, t)));
}
void translate_pow_scalar(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.binary("Power", cx.scalar(0, t), cx.as(1, t)));
}

// --- comparisons -------------------------------------------------------------------------

Translation compare(const char* type, bool other_is_tensor) {
  return [type, other_is_tensor](TranslationContext& cx) {
    const DType t = compare_dtype(cx, other_is_tensor);
    Value a = cx.as(0, t);
    Value b = other_is_tensor ? cx.as(1, t) : cx.scalar(1, t);
    cx.set_output(0, cx.binary(type, a, b));
  };
}

Translation logical(const char* type) {
  return [type](TranslationContext& cx) {
    Value r = cx.binary(type, cx.as(0, DType::Bool), cx.as(1, DType::Bool));
    cx.set_output(0, cx.cast(r, DType::Bool, cx.out_dtype()));
  };
}

// --- selection ---------------------------------------------------------------------------

void translate_where(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Select", {cx.as(0, DType::Bool), cx.as(1, t), cx.as(2, t)}));
}

void translate_masked_fill_scalar(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Select", {cx.as(1, DType::Bool), cx.scalar(2, t), cx.as(0, t)}));
}

void translate_masked_fill_tensor(TranslationContext& cx) {
  const DType t = cx.out_dtype();
  cx.set_output(0, cx.op("Select", {cx.as(1, DType::Bool), cx.as(2, t), cx.as(0, t)}));
}

Translation clamp(bool tensor_bounds) {
  return [tensor_bounds](TranslationContext& cx) {
    const DType t = cx.out_dtype();
    Value x = cx.as(0, t);
    auto bound = [&](size_t i) { return tensor_bounds ? cx.as(i, t) : cx.scalar(i, t); };
    if (!cx.is_none(1)) x = cx.binary("Maximum", x, bound(1));
    if (!cx.is_none(2)) x = cx.binary("Minimum", x, bound(2));
    cx.set_output(0, x);
  };
}

// --- casts and copies ----------------------------------------------------------------------

void translate_to_copy(TranslationContext& cx) {
  cx.set_output(0, cx.as(0, cx.out_dtype()));
}

void translate_clone(TranslationContext& cx) {
  cx.set_output(0, cx.in(0));
}

// copy(self, src): src broadcast to self's shape, in self's dtype.
void translate_copy(TranslationContext& cx) {
  Value src = cx.as(1, cx.out_dtype());
  cx.set_output(
      0, cx.op("Broadcast", {src, cx.shape_tensor(cx.out_info().sizes)}, {{"mode", "numpy"}}));
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(abs, "abs", unary("Abs"));
INGOT_OPENVINO_TRANSLATION(neg, "neg", unary("Negative"));
INGOT_OPENVINO_TRANSLATION(cos, "cos", unary_opmath("Cos"));
INGOT_OPENVINO_TRANSLATION(sin, "sin", unary_opmath("Sin"));
INGOT_OPENVINO_TRANSLATION(exp, "exp", unary_opmath("Exp"));
INGOT_OPENVINO_TRANSLATION(log, "log", unary_opmath("Log"));
INGOT_OPENVINO_TRANSLATION(sqrt, "sqrt", unary_opmath("Sqrt"));
INGOT_OPENVINO_TRANSLATION(tanh, "tanh", unary_opmath("Tanh"));
INGOT_OPENVINO_TRANSLATION(sigmoid, "sigmoid", unary_opmath("Sigmoid"));
INGOT_OPENVINO_TRANSLATION(relu, "relu", unary("Relu"));
INGOT_OPENVINO_TRANSLATION(rsqrt, "rsqrt", translate_rsqrt);
INGOT_OPENVINO_TRANSLATION(silu, "silu", unary_opmath("Swish"));  // Swish without beta = x σ(x)
INGOT_OPENVINO_TRANSLATION(gelu, "gelu", translate_gelu);
INGOT_OPENVINO_TRANSLATION(logical_not, "logical_not", translate_logical_not);
INGOT_OPENVINO_TRANSLATION(tan, "tan", unary_opmath("Tan"));
INGOT_OPENVINO_TRANSLATION(asin, "asin", unary_opmath("Asin"));
INGOT_OPENVINO_TRANSLATION(acos, "acos", unary_opmath("Acos"));
INGOT_OPENVINO_TRANSLATION(atan, "atan", unary_opmath("Atan"));
INGOT_OPENVINO_TRANSLATION(sinh, "sinh", unary_opmath("Sinh"));
INGOT_OPENVINO_TRANSLATION(cosh, "cosh", unary_opmath("Cosh"));
INGOT_OPENVINO_TRANSLATION(asinh, "asinh", unary_opmath("Asinh"));
INGOT_OPENVINO_TRANSLATION(acosh, "acosh", unary_opmath("Acosh"));
INGOT_OPENVINO_TRANSLATION(atanh, "atanh", unary_opmath("Atanh"));
INGOT_OPENVINO_TRANSLATION(erf, "erf", unary_opmath("Erf"));
INGOT_OPENVINO_TRANSLATION(ceil, "ceil", rounding("Ceiling"));
INGOT_OPENVINO_TRANSLATION(floor, "floor", rounding("Floor"));
INGOT_OPENVINO_TRANSLATION(round, "round", rounding("Round", {{"mode", "half_to_even"}}));
INGOT_OPENVINO_TRANSLATION(sign, "sign", unary("Sign"));
INGOT_OPENVINO_TRANSLATION(isinf, "isinf", float_test("IsInf"));
INGOT_OPENVINO_TRANSLATION(isnan, "isnan", float_test("IsNaN"));

INGOT_OPENVINO_TRANSLATION(add_tensor, "add.Tensor", arithmetic("Add", true, true));
INGOT_OPENVINO_TRANSLATION(add_scalar, "add.Scalar", arithmetic("Add", false, true));
INGOT_OPENVINO_TRANSLATION(sub_tensor, "sub.Tensor", arithmetic("Subtract", true, true));
INGOT_OPENVINO_TRANSLATION(sub_scalar, "sub.Scalar", arithmetic("Subtract", false, true));
INGOT_OPENVINO_TRANSLATION(mul_tensor, "mul.Tensor", arithmetic("Multiply", true, false));
INGOT_OPENVINO_TRANSLATION(mul_scalar, "mul.Scalar", arithmetic("Multiply", false, false));
INGOT_OPENVINO_TRANSLATION(div_tensor, "div.Tensor", arithmetic("Divide", true, false));
INGOT_OPENVINO_TRANSLATION(div_scalar, "div.Scalar", arithmetic("Divide", false, false));
INGOT_OPENVINO_TRANSLATION(div_tensor_mode, "div.Tensor_mode", translate_div_mode);
INGOT_OPENVINO_TRANSLATION(pow_tensor_scalar, "pow.Tensor_Scalar", translate_pow_tensor_scalar);
INGOT_OPENVINO_TRANSLATION(pow_tensor_tensor, "pow.Tensor_Tensor", translate_pow_tensor_tensor);
INGOT_OPENVINO_TRANSLATION(pow_scalar, "pow.Scalar", translate_pow_scalar);

INGOT_OPENVINO_TRANSLATION(eq_tensor, "eq.Tensor", compare("Equal", true));
INGOT_OPENVINO_TRANSLATION(eq_scalar, "eq.Scalar", compare("Equal", false));
INGOT_OPENVINO_TRANSLATION(ne_tensor, "ne.Tensor", compare("NotEqual", true));
INGOT_OPENVINO_TRANSLATION(ne_scalar, "ne.Scalar", compare("NotEqual", false));
INGOT_OPENVINO_TRANSLATION(lt_tensor, "lt.Tensor", compare("Less", true));
INGOT_OPENVINO_TRANSLATION(lt_scalar, "lt.Scalar", compare("Less", false));
INGOT_OPENVINO_TRANSLATION(le_tensor, "le.Tensor", compare("LessEqual", true));
INGOT_OPENVINO_TRANSLATION(le_scalar, "le.Scalar", compare("LessEqual", false));
INGOT_OPENVINO_TRANSLATION(gt_tensor, "gt.Tensor", compare("Greater", true));
INGOT_OPENVINO_TRANSLATION(gt_scalar, "gt.Scalar", compare("Greater", false));
INGOT_OPENVINO_TRANSLATION(ge_tensor, "ge.Tensor", compare("GreaterEqual", true));
INGOT_OPENVINO_TRANSLATION(ge_scalar, "ge.Scalar", compare("GreaterEqual", false));
INGOT_OPENVINO_TRANSLATION(logical_and, "logical_and", logical("LogicalAnd"));
INGOT_OPENVINO_TRANSLATION(logical_or, "logical_or", logical("LogicalOr"));

INGOT_OPENVINO_TRANSLATION(where_self, "where.self", translate_where);
INGOT_OPENVINO_TRANSLATION(masked_fill_scalar, "masked_fill.Scalar", translate_masked_fill_scalar);
INGOT_OPENVINO_TRANSLATION(masked_fill_tensor, "masked_fill.Tensor", translate_masked_fill_tensor);
INGOT_OPENVINO_TRANSLATION(clamp, "clamp", clamp(false));
INGOT_OPENVINO_TRANSLATION(clamp_tensor, "clamp.Tensor", clamp(true));

INGOT_OPENVINO_TRANSLATION(to_copy, "_to_copy", translate_to_copy);
INGOT_OPENVINO_TRANSLATION(clone, "clone", translate_clone);
INGOT_OPENVINO_TRANSLATION(copy, "copy", translate_copy);

}  // namespace ingot::exporters::openvino
