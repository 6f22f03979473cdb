#include "ingot/exporters/onnx/ir_fixes.h"

#include <fmt/format.h>

#include "ingot/exporters/registry.h"

namespace ingot::exporters::onnx {

namespace {
std::vector<IrFix>& registry() {
  static std::vector<IrFix> r;
  return r;
}
}  // namespace

void register_ir_fix(IrFix fix, std::source_location where) {
  INGOT_CHECK(!fix.name.empty() && fix.fn, InternalError,
              "[onnx] IR fix at {} needs a name and a function", source_site(where));
  append_named(registry(), std::move(fix), "[onnx] IR fix", where);
}

const std::vector<IrFix>& ir_fixes() {
  return registry();
}

std::vector<std::string> apply_ir_fixes(ModelProto& model) {
  std::vector<std::string> notes;
  for (const IrFix& f : registry()) {
    for (const std::string& n : f.fn(model)) notes.push_back(fmt::format("{}: {}", f.name, n));
  }
  return notes;
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
