#pragma once
// IR fixes (seed 004's _IR_FIXES): rewrites of a backend's finished model that work
// around a runtime's bugs or gaps, applied after translation in registration order.
// Each backend keeps one IrFixList over its own model type (onnx::ModelProto,
// openvino::Model) and a registration macro over it.

#include <fmt/format.h>

#include <functional>
#include <source_location>
#include <string>
#include <vector>

#include "ingot/exporters/registry.h"

namespace ingot::exporters {

template <class Model>
struct IrFix {
  std::string name;
  std::string reason;  // why the runtime needs it
  // Rewrites the model in place; returns notes of what it changed.
  std::function<std::vector<std::string>(Model& model)> fn;
  std::string where;  // registering source line, stamped by add()
};

template <class Model>
class IrFixList {
 public:
  // `label` names the list in messages ("[onnx] IR fix").
  explicit IrFixList(std::string label) : label_(std::move(label)) {}

  // A fix without a name or function, or a second fix of the same name, is an
  // InternalError naming the registering lines.
  void add(IrFix<Model> fix, const std::source_location& where) {
    INGOT_CHECK(!fix.name.empty() && fix.fn, InternalError, "{} at {} needs a name and a function",
                label_, source_site(where));
    append_named(fixes_, std::move(fix), label_, where);
  }

  const std::vector<IrFix<Model>>& fixes() const { return fixes_; }

  // Runs every fix in registration order; returns "name: note" lines.
  std::vector<std::string> apply(Model& model) const {
    std::vector<std::string> notes;
    for (const IrFix<Model>& f : fixes_) {
      for (const std::string& n : f.fn(model)) notes.push_back(fmt::format("{}: {}", f.name, n));
    }
    return notes;
  }

 private:
  std::string label_;
  std::vector<IrFix<Model>> fixes_;
};

}  // namespace ingot::exporters
