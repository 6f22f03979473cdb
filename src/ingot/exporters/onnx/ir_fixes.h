// ONNX IR fixes (exporters/ir_fix_list.h) over the finished ONNX model, applied after
// translation:
//
//   INGOT_REGISTER_ONNX_IR_FIX(name, "why ONNX Runtime needs it", fn);
//
// fn(model) rewrites the model in place and returns notes of what it changed.
#pragma once

#include <functional>
#include <source_location>

#include "ingot/exporters/ir_fix_list.h"
#include "ingot/exporters/onnx/model.h"

namespace ingot::exporters::onnx {

using IrFix = exporters::IrFix<ModelProto>;

// The ONNX exporter's IR fixes, in registration order.
IrFixList<ModelProto>& ir_fixes();

// Calls fn on every graph of the model (the main graph, then subgraphs depth-first).
void for_each_graph(GraphProto& g, const std::function<void(GraphProto&)>& fn);

}  // namespace ingot::exporters::onnx

#define INGOT_REGISTER_ONNX_IR_FIX(name, reason, ...)                          \
  static const bool kOnnxIrFix_##name = [] {                                   \
    ::ingot::exporters::onnx::ir_fixes().add({#name, reason, __VA_ARGS__, {}}, \
                                             std::source_location::current()); \
    return true;                                                               \
  }()
