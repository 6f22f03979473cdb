// ONNX translation of transformers::grouped_mm_fallback (ops/grouped_mm.cpp), the
// grouped matrix product transformers' MoE layers record in torch.export programs:
//   out[r] = input[r] · weight[e(r)]   with e(r) = #{e : offs[e] <= r}; rows with
//   e(r) = E (at or past offs[E-1]) are 0.
// Each row gathers its expert's matrix, so no shape depends on offs and the row count
// stays symbolic:
//   e     = ReduceSum(offs[None, :] <= arange(S)[:, None], axis 1)   [S]   int64
//   W_r   = Gather(weight, min(e, E-1))                               [S, K, N]
//   out   = where(e < E, (input[:, None, :] @ W_r)[:, 0, :], 0)       [S, N]
// Computed in float32 (the CPU kernel's accumulation), then cast to the output dtype.
// Cost: S·K·N gathered weights (fine for the small programs it is tested on; a
// per-expert Loop would avoid the copy for large ones).
#include "ingot/exporters/onnx/translation.h"

namespace ingot::exporters::onnx {
namespace {

void translate_grouped_mm(TranslationContext& cx) {
  const DType f = DType::F32;
  const ir::ValueInfo& xi = cx.in_info(0);
  const ir::ValueInfo& wi = cx.in_info(1);
  if (xi.sizes.size() != 2 || wi.sizes.size() != 3 || cx.in_rank(2) != 1)
    cx.unsupported("grouped_mm_fallback on input of rank " + std::to_string(xi.sizes.size()) +
                   " / weight of rank " + std::to_string(wi.sizes.size()) +
                   " (expected [rows, in] and [experts, in, out])");
  const std::string x = cx.cast(cx.in(0), xi.dtype, f);                    // [S, K]
  const std::string w = cx.cast(cx.in(1), wi.dtype, f);                    // [E, K, N]
  const std::string offs = cx.cast(cx.in(2), cx.in_dtype(2), DType::I64);  // [E]
  const std::string rows = cx.op(
      "Range", {cx.sym0(sym::integer(0)), cx.sym0(xi.sizes[0]), cx.sym0(sym::integer(1))});  // [S]
  const std::string past = cx.op("LessOrEqual", {cx.op("Unsqueeze", {offs, cx.ints_const({0})}),
                                                 cx.op("Unsqueeze", {rows, cx.ints_const({1})})});
  const std::string expert =
      cx.op("ReduceSum", {cx.cast(past, DType::Bool, DType::I64), cx.ints_const({1})},
            {attr("keepdims", int64_t(0))});  // [S] in [0, E]
  const std::string experts = cx.sym0(wi.sizes[0]);
  const std::string valid = cx.op("Less", {expert, experts});  // [S]
  const std::string clamped =
      cx.op("Min", {expert, cx.op("Sub", {experts, cx.sym0(sym::integer(1))})});
  const std::string chosen = cx.op("Gather", {w, clamped}, {attr("axis", int64_t(0))});
  std::string y = cx.op("MatMul", {cx.op("Unsqueeze", {x, cx.ints_const({1})}), chosen});
  y = cx.op("Squeeze", {y, cx.ints_const({1})});  // [S, N]
  y = cx.op("Where", {cx.op("Unsqueeze", {valid, cx.ints_const({1})}), y, cx.scalar_const(0.0, f)});
  cx.set_output(0, cx.cast(y, f, cx.out_dtype()));
}

}  // namespace

INGOT_ONNX_TRANSLATION(grouped_mm_fallback, "transformers::grouped_mm_fallback",
                       translate_grouped_mm);

}  // namespace ingot::exporters::onnx
