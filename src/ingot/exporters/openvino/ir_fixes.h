// OpenVINO IR fixes: rewrites of the finished OpenVINO model that work around a runtime's
// bugs or gaps (seed 004's _IR_FIXES for this backend), applied after translation:
//
//   INGOT_REGISTER_OPENVINO_IR_FIX(name, "why OpenVINO needs it", fn);
//
// fn(model) rewrites the model in place and returns notes of what it changed.
#pragma once

#include <functional>
#include <source_location>
#include <string>
#include <vector>

#include "ingot/exporters/openvino/ir.h"

namespace ingot::exporters::openvino {

using IrFixFn = std::function<std::vector<std::string>(Model& model)>;

struct IrFix {
  std::string name;
  std::string reason;
  IrFixFn fn;
  std::string where;
};

void register_ir_fix(IrFix fix, std::source_location where = std::source_location::current());
const std::vector<IrFix>& ir_fixes();
// Runs every IR fix in registration order; returns "name: note" lines.
std::vector<std::string> apply_ir_fixes(Model& model);

// Calls fn on every graph of the model (the main graph, then bodies depth-first).
void for_each_graph(Graph& g, const std::function<void(Graph&)>& fn);

}  // namespace ingot::exporters::openvino

#define INGOT_REGISTER_OPENVINO_IR_FIX(name, reason, ...)                            \
  static const bool kOpenVINOIrFix_##name = [] {                                     \
    ::ingot::exporters::openvino::register_ir_fix({#name, reason, __VA_ARGS__, {}}); \
    return true;                                                                     \
  }()
