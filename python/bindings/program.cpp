// ExportedProgram and what it shows (graph, signature, range constraints, state), the
// runtime's ProgramModule (torch's ep.module()), and save / load of .ingot archives.
// Calls that run or read programs release the GIL.
#include <limits>

#include "bindings.h"
#include "ingot/formats/serialize.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::python {

namespace {

// An end of a symbol range: an int, or +/- float('inf') for an open end.
py::object range_end(int64_t v) {
  if (v == sym::ValueRange::kPosInf) return py::float_(std::numeric_limits<double>::infinity());
  if (v == sym::ValueRange::kNegInf) return py::float_(-std::numeric_limits<double>::infinity());
  return py::int_(v);
}

// One node, as the Python side lists it.
py::dict node_dict(const ir::Graph& g, const ir::Node& n) {
  py::list outputs;
  for (ir::ValueId v : n.outputs) outputs.append(g.value(v).name);
  py::list inputs;
  for (ir::ValueId v : ir::Graph::node_inputs(n)) inputs.append(g.value(v).name);
  py::dict d;
  d["target"] = n.target;
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["source"] = n.source.str();
  return d;
}

std::vector<std::string> user_input_names(const ExportedProgram& ep) {
  std::vector<std::string> names;
  for (const InputSpec& in : ep.signature.inputs)
    if (in.kind == InputKind::UserInput) names.push_back(in.target);
  return names;
}

// The dtype each user input must have (the placeholder's), in user-input order.
std::vector<std::string> user_input_dtypes(const ExportedProgram& ep) {
  std::vector<std::string> dtypes;
  for (size_t i = 0; i < ep.signature.inputs.size(); ++i) {
    if (ep.signature.inputs[i].kind != InputKind::UserInput) continue;
    dtypes.emplace_back(dtype_name(ep.graph->value(ep.graph->inputs[i]).dtype));
  }
  return dtypes;
}

std::vector<std::string> user_output_names(const ExportedProgram& ep) {
  std::vector<std::string> names;
  for (const OutputSpec& o : ep.signature.outputs)
    if (o.kind == OutputKind::UserOutput) names.push_back(o.name);
  return names;
}

}  // namespace

void bind_program(py::module_& m) {
  py::class_<InputSpec>(m, "InputSpec")
      .def_property_readonly("kind", [](const InputSpec& s) { return input_kind_name(s.kind); })
      .def_readonly("name", &InputSpec::name)
      .def_readonly("target", &InputSpec::target)
      .def_readonly("persistent", &InputSpec::persistent)
      .def("__repr__", [](const InputSpec& s) {
        return fmt::format("InputSpec(kind={}, name='{}', target='{}')", input_kind_name(s.kind),
                           s.name, s.target);
      });
  py::class_<OutputSpec>(m, "OutputSpec")
      .def_property_readonly("kind", [](const OutputSpec& s) { return output_kind_name(s.kind); })
      .def_readonly("name", &OutputSpec::name)
      .def_readonly("target", &OutputSpec::target)
      .def("__repr__", [](const OutputSpec& s) {
        return fmt::format("OutputSpec(kind={}, name='{}', target='{}')", output_kind_name(s.kind),
                           s.name, s.target);
      });
  py::class_<GraphSignature>(m, "GraphSignature")
      .def_readonly("input_specs", &GraphSignature::inputs)
      .def_readonly("output_specs", &GraphSignature::outputs)
      .def("__str__", &GraphSignature::str)
      .def("__repr__", &GraphSignature::str);

  py::class_<ir::Graph, std::shared_ptr<ir::Graph>>(m, "Graph")
      .def_property_readonly("nodes",
                             [](const ir::Graph& g) {
                               py::list nodes;
                               for (const ir::Node& n : g.nodes()) nodes.append(node_dict(g, n));
                               return nodes;
                             })
      .def("__len__", [](const ir::Graph& g) { return g.nodes().size(); })
      .def("__str__", [](const ir::Graph& g) { return g.print(); })
      .def("__repr__", [](const ir::Graph& g) { return g.print(); });

  py::class_<ExportedProgram, std::shared_ptr<ExportedProgram>>(m, "_ExportedProgram")
      .def_readonly("graph", &ExportedProgram::graph)
      .def_readonly("signature", &ExportedProgram::signature)
      .def_readonly("state", &ExportedProgram::state)
      .def_readonly("constants", &ExportedProgram::constants)
      .def_readonly("input_names", &ExportedProgram::input_names)
      .def_readonly("guards", &ExportedProgram::guards)
      .def_readonly("example_inputs", &ExportedProgram::example_inputs)
      .def_readonly("ingot_version", &ExportedProgram::ingot_version)
      .def_property_readonly("range_constraints",
                             [](const ExportedProgram& ep) {
                               py::dict d;
                               for (const auto& [name, r] : ep.range_constraints) {
                                 d[py::str(name)] = py::make_tuple(range_end(r.range.lo),
                                                                   range_end(r.range.hi), r.backed);
                               }
                               return d;
                             })
      .def_property_readonly("user_input_names", &user_input_names)
      .def_property_readonly("user_input_dtypes", &user_input_dtypes)
      .def_property_readonly("user_output_names", &user_output_names)
      .def("print", &ExportedProgram::print, py::call_guard<py::gil_scoped_release>())
      .def("verify", &ExportedProgram::verify, py::call_guard<py::gil_scoped_release>());

  py::class_<runtime::ProgramModule>(m, "_ProgramModule")
      .def(py::init([](std::shared_ptr<ExportedProgram> p) {
             return std::make_unique<runtime::ProgramModule>(
                 std::shared_ptr<const ExportedProgram>(std::move(p)));
           }),
           py::arg("program"))
      // Flat user inputs in the program's order -> flat user outputs.
      .def("run", &runtime::ProgramModule::run, py::arg("inputs"),
           py::call_guard<py::gil_scoped_release>())
      .def("set_planning", &runtime::ProgramModule::set_planning)
      .def_property_readonly("num_plans", &runtime::ProgramModule::num_plans)
      .def_property_readonly("plannable", &runtime::ProgramModule::plannable)
      .def_property_readonly("unplannable_reason", &runtime::ProgramModule::unplannable_reason)
      .def_property_readonly("num_planned_runs", &runtime::ProgramModule::num_planned_runs)
      .def("buffer", &runtime::ProgramModule::buffer, py::arg("name"));

  m.def(
      "save",
      [](const std::shared_ptr<ExportedProgram>& p, const std::string& path) { ingot::save(*p, path); },
      py::arg("program"), py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def(
      "load",
      [](const std::string& path) { return std::make_shared<ExportedProgram>(ingot::load(path)); },
      py::arg("path"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace ingot::python
