// ONNX IR fixes: rewrites of the finished ONNX model that work around a runtime's bugs
// or gaps (seed 004's _IR_FIXES), applied after translation:
//
//   INGOT_REGISTER_ONNX_IR_FIX(name, "why ONNX Runtime needs it", fn);
//
// fn(model) rewrites the model in place and returns notes of what it changed.
#pragma once

#include <functional>
#include <source_location>
#include <string>
#include <vector>

#include "ingot/exporters/onnx/model.h"

namespace ingot::exporters::onnx {

using IrFixFn = std::function<std::vector<std::string>(ModelProto& model)>;

struct IrFix {
  std::string name;
  std::string reason;
  IrFixFn fn;
  std::string where;
};

void register_ir_fix(IrFix fix, std::source_location where = std::source_location::current());
const std::vector<IrFix>& ir_fixes();
// Runs every IR fix in registration order; returns "name: note" lines.
std::vector<std::string> apply_ir_fixes(ModelProto& model);

// Calls fn on every graph of the model (the main graph, then subgraphs depth-first).
void for_each_graph(GraphProto& g, const std::function<void(GraphProto&)>& fn);

}  // namespace ingot::exporters::onnx

#define INGOT_REGISTER_ONNX_IR_FIX(name, reason, ...)                            \
  static const bool kOnnxIrFix_##name = [] {                                     \
    ::ingot::exporters::onnx::register_ir_fix({#name, reason, __VA_ARGS__, {}}); \
    return true;                                                                 \
  }()
