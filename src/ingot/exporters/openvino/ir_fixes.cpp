#include "ingot/exporters/openvino/ir_fixes.h"

#include <fmt/format.h>

#include "ingot/exporters/registry.h"

namespace ingot::exporters::openvino {

namespace {
std::vector<IrFix>& registry() {
  static std::vector<IrFix> r;
  return r;
}
}  // namespace

void register_ir_fix(IrFix fix, std::source_location where) {
  INGOT_CHECK(!fix.name.empty() && fix.fn, InternalError,
              "[openvino] IR fix at {} needs a name and a function", source_site(where));
  append_named(registry(), std::move(fix), "[openvino] IR fix", where);
}

const std::vector<IrFix>& ir_fixes() {
  return registry();
}

std::vector<std::string> apply_ir_fixes(Model& model) {
  std::vector<std::string> notes;
  for (const IrFix& f : registry()) {
    for (const std::string& n : f.fn(model)) notes.push_back(fmt::format("{}: {}", f.name, n));
  }
  return notes;
}

void for_each_graph(Graph& g, const std::function<void(Graph&)>& fn) {
  fn(g);
  for (Layer& l : g.layers()) {
    for (auto& [name, body] : l.bodies) for_each_graph(*body, fn);
  }
}

}  // namespace ingot::exporters::openvino
