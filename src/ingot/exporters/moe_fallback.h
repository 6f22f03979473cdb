// The dense fallback of moe_experts for backends that cannot lower it (seed 004 patch):
// every expert is computed and weighted by the router weight it got (zero when not
// chosen), with core ops only (linear, silu / gelu, eq, masked_fill, sum). It costs
// num_experts / k times the selected-expert compute, so a backend should prefer a
// translation of moe_experts where it can (the ONNX exporter has one).
//
// A backend opts in with one line next to its exporter:
//   INGOT_REGISTER_OP_PATCH(mybackend_dense_moe_experts, "mybackend", "moe_experts",
//                           "mybackend has no grouped expert matmul",
//                           ingot::exporters::dense_moe_experts_patch);
#pragma once

#include "ingot/exporters/patches.h"

namespace ingot::exporters {

// An op-patch factory (ignores the original implementation).
OpImpl dense_moe_experts_patch(OpImpl original);

}  // namespace ingot::exporters
