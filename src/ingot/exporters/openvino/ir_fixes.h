// OpenVINO IR fixes (exporters/ir_fix_list.h) over the finished OpenVINO model, applied
// after translation:
//
//   INGOT_REGISTER_OPENVINO_IR_FIX(name, "why OpenVINO needs it", fn);
//
// fn(model) rewrites the model in place and returns notes of what it changed.
#pragma once

#include <functional>
#include <source_location>

#include "ingot/exporters/ir_fix_list.h"
#include "ingot/exporters/openvino/ir.h"

namespace ingot::exporters::openvino {

using IrFix = exporters::IrFix<Model>;

// The OpenVINO exporter's IR fixes, in registration order.
IrFixList<Model>& ir_fixes();

// Calls fn on every graph of the model (the main graph, then bodies depth-first).
void for_each_graph(Graph& g, const std::function<void(Graph&)>& fn);

}  // namespace ingot::exporters::openvino

#define INGOT_REGISTER_OPENVINO_IR_FIX(name, reason, ...)                          \
  static const bool kOpenVINOIrFix_##name = [] {                                   \
    ::ingot::exporters::openvino::ir_fixes().add({#name, reason, __VA_ARGS__, {}}, \
                                                 std::source_location::current()); \
    return true;                                                                   \
  }()
