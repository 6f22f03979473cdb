// The ONNX backend's patches and node fixes, each next to the reason it exists.
#include <fmt/format.h>

#include "ingot/exporters/fixes.h"
#include "ingot/exporters/patches.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::onnx {

namespace {

// rms_norm(input, normalized_shape, weight?, eps?) in core ops, computing like ingot's
// kernel: in float32 for 16-bit inputs, eps defaulting to the compute type's epsilon,
// one rounding at the end.
OpImpl rms_norm_in_core_ops(OpImpl /*original*/) {
  return [](const OpArgs& a) -> std::vector<Tensor> {
    const Tensor& x = a.tensor(0);
    const size_t k = a.sym_int_list(1).size();
    const DType work = x.dtype() == DType::F64 ? DType::F64 : DType::F32;
    const double eps = a.optional_f64(3).value_or(
        work == DType::F64 ? std::numeric_limits<double>::epsilon()
                           : double(std::numeric_limits<float>::epsilon()));
    IntShape dims;
    for (size_t i = 0; i < k; ++i) dims.push_back(-int64_t(i) - 1);
    Tensor xf = x.dtype() == work ? x : to(x, work);
    Tensor r = rsqrt(add(mean(mul(xf, xf), dims, true), Scalar(eps)));  // [..., 1...]
    Tensor y = mul(xf, r);
    Tensor w = a.optional_tensor(2);
    if (w.defined()) y = mul(y, w.dtype() == work ? w : to(w, work));
    return {y.dtype() == x.dtype() ? y : to(y, x.dtype())};
  };
}

}  // namespace

// ONNX has RMSNormalization only from opset 23 (ONNX Runtime 1.22+); opsets 17-22 need
// it spelled out, so the ONNX backend traces rms_norm as pow-mean-rsqrt-mul. The eager
// op and every other backend keep the fused kernel.
INGOT_REGISTER_OP_PATCH(onnx_rms_norm_in_core_ops, "onnx", "rms_norm",
                        "ONNX opsets 17-22 have no RMSNormalization", rms_norm_in_core_ops);

// ONNX has no assert operator. A runtime assert of the program (the static cache's room
// check, a check() on data) cannot be kept: the fix drops it and records it in the
// export's notes (and the ONNX model's metadata), so the caller knows which conditions
// the ONNX model no longer checks. Bounds on a single input size were already turned into
// ranges by the fold_bound_asserts program fix (checked by ingot, documented by dims).
INGOT_REGISTER_NODE_FIX(onnx_drop_runtime_asserts, "onnx", "assert", "ONNX has no assert operator",
                        [](ir::Graph&, const ir::Node& n) -> std::optional<NodeRewrite> {
                          NodeRewrite r;
                          r.note = fmt::format("dropped runtime assert {} ({})", n.condition->str(),
                                               n.source.str());
                          return r;
                        });

}  // namespace ingot::exporters::onnx
