// The OpenVINO backend's node fixes, each next to the reason it exists.
#include <fmt/format.h>

#include "ingot/exporters/fixes.h"
#include "ingot/exporters/moe_fallback.h"

namespace ingot::exporters::openvino {

// OpenVINO has no assert operation. A runtime assert of the program (the static cache's
// room check, a check() on data) cannot be kept: the fix drops it and records it in the
// export's notes (and the model's rt_info), so the caller knows which conditions the
// OpenVINO model no longer checks. Bounds on a single input size were already turned into
// ranges by the fold_bound_asserts program fix (they are the Parameters' intervals).
INGOT_REGISTER_NODE_FIX(openvino_drop_runtime_asserts, "openvino", "assert",
                        "OpenVINO has no assert operation",
                        [](ir::Graph&, const ir::Node& n) -> std::optional<NodeRewrite> {
                          NodeRewrite r;
                          r.note = fmt::format("dropped runtime assert {} ({})", n.condition->str(),
                                               n.source.str());
                          return r;
                        });

// OpenVINO has no grouped expert matmul: Mixtral / Qwen3-MoE layers are exported with
// every expert computed and weighted by its router weight (core ops only).
INGOT_REGISTER_OP_PATCH(openvino_dense_moe_experts, "openvino", "moe_experts",
                        "OpenVINO has no grouped expert matmul", dense_moe_experts_patch);

}  // namespace ingot::exporters::openvino
