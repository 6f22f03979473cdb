// scaled_dot_product_attention composed of portable kernels, for programs that reach the
// emitter with the op still in them: a torch.export archive in the training dialect (read
// by pt2::load_pt2, never traced by ingot, so executorch_patches.cpp's trace-time
// replacement does not run). The same computation as that patch, as kernel calls:
//
//   q [B, H, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev], mask [.., L, S] (bool or additive)
//   k, v: kv heads repeated H / Hk times when enable_gqa (view -> expand -> view)
//   scores [B*H, L, S] = bmm(q as [B*H, L, E], permute(k as [B*H, S, E]))
//   scores = scores * scale, as [B, H, L, S]; masked: where(mask, scores, -inf) / + mask;
//   is_causal: where(tril(ones [L, S]), scores, -inf)
//   p = softmax(scores, -1); a fully masked row (NaN) is 0, as ingot's kernel gives
//   out [B, H, L, Ev] = bmm(p as [B*H, L, S], v as [B*H, S, Ev])
#include <fmt/format.h>

#include <cmath>

#include "ingot/exporters/executorch/kernels.h"

namespace ingot::exporters::executorch {

namespace {

using sym::Expr;

// A view of `t` with `sizes` (a copy: view_copy into a planned temporary).
int32_t view(KernelContext& k, int32_t t, DType dtype, const std::vector<Expr>& sizes) {
  const int32_t v = k.temp(dtype, sizes);
  k.call("aten::view_copy.out", {t, k.int_list_of(sizes)}, {v});
  return v;
}

// A 0-d tensor holding `value`.
int32_t scalar_tensor(KernelContext& k, DType dtype, double value) {
  const int32_t t = k.temp(dtype, {});
  k.call("aten::full.out", {k.int_list_of({}), k.double_const(value)}, {t});
  return t;
}

// k or v [B, Hk, S, D] -> [B, Hk * g, S, D], each kv head repeated g times in place
// (repeat_interleave over dim 1).
int32_t repeat_kv_heads(KernelContext& k, int32_t t, const ir::ValueInfo& info, int64_t g) {
  const Expr& B = info.sizes[0];
  const Expr& Hk = info.sizes[1];
  const Expr& S = info.sizes[2];
  const Expr& D = info.sizes[3];
  const int32_t one = view(k, t, info.dtype, {B, Hk, sym::integer(1), S, D});
  const std::vector<Expr> wide{B, Hk, sym::integer(g), S, D};
  const int32_t expanded = k.temp(info.dtype, wide);
  k.call("aten::expand_copy.out", {one, k.int_list_of(wide), k.bool_const(false)}, {expanded});
  return view(k, expanded, info.dtype, {B, sym::mul(Hk, sym::integer(g)), S, D});
}

// Argument i as a number / flag (absent: `otherwise`).
double number_arg(const KernelContext& k, size_t i, double otherwise) {
  if (k.is_none(i)) return otherwise;
  const ir::Argument& a = k.node().args[i];
  if (const auto* d = std::get_if<double>(&a)) return *d;
  if (const auto* s = std::get_if<Scalar>(&a)) return s->to_double();
  k.unsupported(fmt::format("argument {} is not a number", i));
}
bool flag_arg(const KernelContext& k, size_t i) {
  if (k.is_none(i)) return false;
  const ir::Argument& a = k.node().args[i];
  if (const auto* b = std::get_if<bool>(&a)) return *b;
  if (const auto* s = std::get_if<Scalar>(&a)) return s->to_bool();
  k.unsupported(fmt::format("argument {} is not a bool", i));
}

// args: query, key, value, attn_mask?, dropout_p, is_causal, scale?, enable_gqa.
void sdpa(KernelContext& k) {
  const ir::ValueInfo& qi = k.in_info(0);
  const ir::ValueInfo& ki = k.in_info(1);
  const ir::ValueInfo& vi = k.in_info(2);
  if (qi.sizes.size() != 4 || ki.sizes.size() != 4 || vi.sizes.size() != 4)
    k.unsupported("only 4-d [B, H, L, E] query / key / value are lowered");
  if (number_arg(k, 4, 0.0) != 0.0) k.unsupported("dropout_p must be 0 (inference)");
  const bool has_mask = !k.is_none(3);
  const bool is_causal = flag_arg(k, 5);
  if (has_mask && is_causal) k.unsupported("an attn_mask together with is_causal=true");
  const DType dt = qi.dtype;
  const Expr &B = qi.sizes[0], &H = qi.sizes[1], &L = qi.sizes[2], &E = qi.sizes[3];
  const Expr &S = ki.sizes[2], &Ev = vi.sizes[3];
  const Expr BH = sym::mul(B, H);
  if (!E.is_integer()) k.unsupported("the head size must be static");
  const double scale = number_arg(k, 6, 1.0 / std::sqrt(double(E.value())));

  int32_t key = k.tensor(1), value = k.tensor(2);
  if (!(ki.sizes[1] == H)) {
    if (!flag_arg(k, 7) || !H.is_integer() || !ki.sizes[1].is_integer() ||
        H.value() % ki.sizes[1].value() != 0)
      k.unsupported("key / value heads differ from the query's without enable_gqa and static "
                    "head counts");
    const int64_t g = H.value() / ki.sizes[1].value();
    key = repeat_kv_heads(k, key, ki, g);
    value = repeat_kv_heads(k, value, vi, g);
  }
  // scores = (q k^T) * scale: [B*H, L, S]
  const int32_t q3 = view(k, k.tensor(0), dt, {BH, L, E});
  const int32_t k3 = view(k, key, dt, {BH, S, E});
  const int32_t kt = k.temp(dt, {BH, E, S});
  k.call("aten::permute_copy.out", {k3, k.int_list_of({sym::integer(0), sym::integer(2),
                                                      sym::integer(1)})},
         {kt});
  const int32_t qk = k.temp(dt, {BH, L, S});
  k.call("aten::bmm.out", {q3, kt}, {qk});
  const int32_t scaled = k.temp(dt, {BH, L, S});
  k.call("aten::mul.Scalar_out", {qk, k.double_const(scale)}, {scaled});
  int32_t scores = view(k, scaled, dt, {B, H, L, S});
  // masking: [B, H, L, S]
  int32_t keep = -1;  // a bool mask, True = attend
  if (is_causal) {
    const int32_t ones = k.temp(DType::Bool, {L, S});
    k.call("aten::full.out", {k.int_list_of({L, S}), k.bool_const(true)}, {ones});
    keep = k.temp(DType::Bool, {L, S});
    k.call("aten::tril.out", {ones, k.int_const(0)}, {keep});
  } else if (has_mask && k.in_info(3).dtype == DType::Bool) {
    keep = k.tensor(3);
  }
  if (keep >= 0) {
    const int32_t masked = k.temp(dt, {B, H, L, S});
    k.call("aten::where.self_out", {keep, scores, scalar_tensor(k, dt, -INFINITY)}, {masked});
    scores = masked;
  } else if (has_mask) {
    const int32_t biased = k.temp(dt, {B, H, L, S});
    k.call("aten::add.out", {scores, k.tensor(3), k.int_const(1)}, {biased});
    scores = biased;
  }
  // p = softmax(scores) with fully masked rows (NaN) as 0
  const int32_t p = k.temp(dt, {B, H, L, S});
  k.call("aten::_softmax.out", {scores, k.int_const(-1), k.bool_const(false)}, {p});
  const int32_t nan = k.temp(DType::Bool, {B, H, L, S});
  k.call("aten::isnan.out", {p}, {nan});
  const int32_t safe = k.temp(dt, {B, H, L, S});
  k.call("aten::where.self_out", {nan, scalar_tensor(k, dt, 0.0), p}, {safe});
  // out = p v: [B*H, L, Ev] -> [B, H, L, Ev]
  const int32_t p3 = view(k, safe, dt, {BH, L, S});
  const int32_t v3 = view(k, value, dt, {BH, S, Ev});
  const int32_t pv = k.temp(dt, {BH, L, Ev});
  k.call("aten::bmm.out", {p3, v3}, {pv});
  k.call("aten::view_copy.out", {pv, k.int_list_of({B, H, L, Ev})}, {k.out()});
}

INGOT_EXECUTORCH_KERNEL(scaled_dot_product_attention, "scaled_dot_product_attention", sdpa);

}  // namespace

}  // namespace ingot::exporters::executorch
