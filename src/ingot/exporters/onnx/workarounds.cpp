// The ONNX backend's node fixes, each next to the reason it exists.
#include <fmt/format.h>

#include "ingot/exporters/fixes.h"

namespace ingot::exporters::onnx {

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
