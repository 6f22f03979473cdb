// The IR fixes for OpenVINO's CPU plugin, each next to the reason it exists.
#include <fmt/format.h>

#include "ingot/exporters/openvino/ir_fixes.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::openvino {

namespace {

// OpenVINO's CPU plugin cannot hold an i64 variable: the first infer of a model with an
// i64 ReadValue fails with "CPU plugin does not support i64 for use with oneDNN"
// (openvino 2026.4). The static cache's position counter is one. The fix stores such a
// variable as i32 (its initial value converted) and converts at both ends: ReadValue(i32)
// -> Convert(i64) for the readers, Convert(i32) -> Assign. Cache positions are far below
// 2^31. It can go when the plugin keeps i64 state.
std::vector<std::string> i64_variables_as_i32(Model& model) {
  std::vector<std::string> notes;
  for_each_graph(model.graph, [&](Graph& g) {
    std::vector<Layer> old = std::move(g.layers());
    g.layers().clear();
    std::vector<Layer>& out = g.layers();
    std::vector<int32_t> remap(old.size(), -1);
    auto convert = [&](Value from, DType to, const std::string& name) {
      Layer c;
      c.name = name;
      c.type = "Convert";
      c.version = std::string(op_version("Convert"));
      c.attrs = {{"destination_type", std::string(element_type_name(to))}};
      c.inputs = {from};
      PortInfo p = out[size_t(from.layer)].outputs[size_t(from.port)];
      p.type = to;
      p.names.clear();
      c.outputs = {p};
      out.push_back(std::move(c));
      return int32_t(out.size() - 1);
    };
    for (size_t i = 0; i < old.size(); ++i) {
      Layer l = std::move(old[i]);
      for (Value& v : l.inputs) v.layer = remap[size_t(v.layer)];
      const bool rv = l.type == "ReadValue" && l.outputs[0].type == DType::I64;
      const bool as =
          l.type == "Assign" && !l.inputs.empty() &&
          out[size_t(l.inputs[0].layer)].outputs[size_t(l.inputs[0].port)].type == DType::I64;
      if (rv) {
        // Its initial value: an i32 Const (the i64 Const stays for other readers).
        Layer& init = out[size_t(l.inputs[0].layer)];
        Layer init32 = init;
        init32.name = init.name + "/i32";
        init32.data = contiguous(to(init.data, DType::I32));
        init32.attrs[0].second = "i32";
        init32.outputs[0].type = DType::I32;
        out.push_back(std::move(init32));
        l.inputs[0] = {int32_t(out.size() - 1), 0};
        for (auto& [k, v] : l.attrs) {
          if (k == "variable_type") v = "i32";
        }
        l.outputs[0].type = DType::I32;
        const std::string name = l.name;
        std::string variable;
        for (const auto& [k, v] : l.attrs) {
          if (k == "variable_id") variable = v;
        }
        out.push_back(std::move(l));
        remap[i] = convert({int32_t(out.size() - 1), 0}, DType::I64, name + "/i64");
        notes.push_back(fmt::format("variable '{}' held as i32", variable));
        continue;
      }
      if (as) {
        l.inputs[0] = {convert(l.inputs[0], DType::I32, l.name + "/i32"), 0};
        l.outputs[0].type = DType::I32;
      }
      out.push_back(std::move(l));
      remap[i] = int32_t(out.size() - 1);
    }
    g.remap_ids(remap);
  });
  return notes;
}

}  // namespace

INGOT_REGISTER_OPENVINO_IR_FIX(cpu_i64_variables_as_i32,
                               "OpenVINO's CPU plugin cannot hold an i64 variable",
                               i64_variables_as_i32);

}  // namespace ingot::exporters::openvino
