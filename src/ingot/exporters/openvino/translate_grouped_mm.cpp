// OpenVINO translation of transformers::grouped_mm_fallback (ops/grouped_mm.cpp), the
// grouped matrix product transformers' MoE layers record in torch.export programs:
//   out[r] = input[r] · weight[e(r)]   with e(r) = #{e : offs[e] <= r}; rows with
//   e(r) = E (at or past offs[E-1]) are 0.
// Each row gathers its expert's matrix, so no shape depends on offs and the row count
// stays symbolic (the algorithm of the ONNX translation, onnx/translate_grouped_mm.cpp):
//   e     = ReduceSum(offs[None, :] <= range(S)[:, None], axis 1)   [S]   i64
//   W_r   = Gather(weight, min(e, E-1), axis 0)                      [S, K, N]
//   out   = select(e < E, (input[:, None, :] @ W_r)[:, 0, :], 0)     [S, N]
// Computed in f32 (the CPU kernel's accumulation), then converted to the output type.
// Cost: S·K·N gathered weights (fine for the small programs it is tested on; a
// per-expert Loop would avoid the copy for large ones).
#include "ingot/exporters/openvino/translation.h"

namespace ingot::exporters::openvino {
namespace {

void translate_grouped_mm(TranslationContext& cx) {
  const DType f = DType::F32;
  const ir::ValueInfo& xi = cx.in_info(0);
  const ir::ValueInfo& wi = cx.in_info(1);
  if (xi.sizes.size() != 2 || wi.sizes.size() != 3 || cx.in_rank(2) != 1)
    cx.unsupported("grouped_mm_fallback on input of rank " + std::to_string(xi.sizes.size()) +
                   " / weight of rank " + std::to_string(wi.sizes.size()) +
                   " (expected [rows, in] and [experts, in, out])");
  const Value x = cx.as(0, f);              // [S, K]
  const Value w = cx.as(1, f);              // [E, K, N]
  const Value offs = cx.as(2, DType::I64);  // [E]
  const Value rows =
      cx.op("Range", {cx.sym0(sym::integer(0)), cx.sym0(xi.sizes[0]), cx.sym0(sym::integer(1))},
            {{"output_type", "i64"}});  // [S]
  const Value past = cx.binary("LessEqual", cx.op("Unsqueeze", {offs, cx.ints_const({0})}),
                               cx.op("Unsqueeze", {rows, cx.ints_const({1})}));  // [S, E]
  const Value expert =
      cx.op("ReduceSum", {cx.cast(past, DType::Bool, DType::I64), cx.ints_const({1})},
            {{"keep_dims", "false"}});  // [S] in [0, E]
  const Value experts = cx.sym0(wi.sizes[0]);
  const Value valid = cx.binary("Less", expert, experts);  // [S]
  const Value clamped =
      cx.binary("Minimum", expert, cx.binary("Subtract", experts, cx.sym0(sym::integer(1))));
  const Value chosen =
      cx.op("Gather", {w, clamped, cx.constant(Tensor::scalar(int64_t(0)))});  // [S, K, N]
  Value y = cx.op("MatMul", {cx.op("Unsqueeze", {x, cx.ints_const({1})}), chosen},
                  {{"transpose_a", "false"}, {"transpose_b", "false"}});  // [S, 1, N]
  y = cx.op("Squeeze", {y, cx.ints_const({1})});                          // [S, N]
  y = cx.op("Select",
            {cx.op("Unsqueeze", {valid, cx.ints_const({1})}), y, cx.scalar_const(0.0, f)});
  cx.set_output(0, cx.cast(y, f, cx.out_dtype()));
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(grouped_mm_fallback, "transformers::grouped_mm_fallback",
                           translate_grouped_mm);

}  // namespace ingot::exporters::openvino
