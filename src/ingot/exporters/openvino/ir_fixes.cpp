#include "ingot/exporters/openvino/ir_fixes.h"

namespace ingot::exporters::openvino {

IrFixList<Model>& ir_fixes() {
  static IrFixList<Model> list("[openvino] IR fix");
  return list;
}

void for_each_graph(Graph& g, const std::function<void(Graph&)>& fn) {
  fn(g);
  for (Layer& l : g.layers()) {
    for (auto& [name, body] : l.bodies) for_each_graph(*body, fn);
  }
}

}  // namespace ingot::exporters::openvino
