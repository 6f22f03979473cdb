#include "ingot/exporters/onnx/ir_fixes.h"

namespace ingot::exporters::onnx {

IrFixList<ModelProto>& ir_fixes() {
  static IrFixList<ModelProto> list("[onnx] IR fix");
  return list;
}

void for_each_graph(GraphProto& g, const std::function<void(GraphProto&)>& fn) {
  fn(g);
  for (NodeProto& n : g.node) {
    for (AttributeProto& a : n.attribute) {
      if (auto* sub = std::get_if<Box<GraphProto>>(&a.value)) for_each_graph(**sub, fn);
      if (auto* subs = std::get_if<std::vector<GraphProto>>(&a.value)) {
        for (GraphProto& s : *subs) for_each_graph(s, fn);
      }
    }
  }
}

}  // namespace ingot::exporters::onnx
