// The exporter framework (transformers.exporters, natively): configs read from JSON (the
// Python layer builds the JSON from dicts and keyword arguments), exporters picked by
// format, their artifacts, and generation components with their directory writer.
#include "bindings.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"

namespace ingot::python {

namespace {

using ConfigPtr = std::shared_ptr<exporters::NativeExportConfig>;

struct PyExporter {
  std::unique_ptr<exporters::Exporter> exporter;
};

}  // namespace

void bind_exporters(py::module_& m) {
  py::class_<exporters::NativeExportConfig, ConfigPtr>(m, "_Config")
      .def_static(
          "from_json",
          [](const std::string& text, const std::string& origin) {
            return ConfigPtr(exporters::AutoExportConfig::from_json(text, origin));
          },
          py::arg("text"), py::arg("origin") = "config")
      .def_property_readonly("export_format", &exporters::NativeExportConfig::export_format)
      .def("to_json", &exporters::NativeExportConfig::to_json);
  m.def("known_config_formats", &exporters::AutoExportConfig::known_formats);
  m.def("registered_formats", &exporters::registered_formats);

  py::class_<exporters::ExportArtifact>(m, "_Artifact")
      .def_property_readonly("format", &exporters::ExportArtifact::format)
      .def_property_readonly("file_extension", &exporters::ExportArtifact::file_extension)
      .def_property_readonly("program",
                             [](const exporters::ExportArtifact& a) {
                               return std::make_shared<ExportedProgram>(a.program);
                             })
      .def_readonly("notes", &exporters::ExportArtifact::notes)
      .def("save", &exporters::ExportArtifact::save, py::arg("path"),
           py::call_guard<py::gil_scoped_release>());

  py::class_<Components, std::shared_ptr<Components>>(m, "_Components")
      .def("names",
           [](const Components& c) {
             std::vector<std::string> names;
             for (const auto& [name, part] : c.parts) names.push_back(name);
             return names;
           })
      .def(
          "get",
          [](const Components& c, const std::string& name) -> const exporters::ExportArtifact& {
            INGOT_CHECK(c.parts.contains(name), ValueError, "[ingot.exporters] no component '{}'",
                        name);
            return *c.parts.at(name);
          },
          py::arg("name"), py::return_value_policy::reference_internal)
      .def_property_readonly("max_cache_len",
                             [](const Components& c) { return c.options.max_cache_len; })
      .def(
          "save",
          [](const Components& c, const std::string& dir) { c.parts.save(dir, c.model_folder); },
          py::arg("dir"), py::call_guard<py::gil_scoped_release>());

  py::class_<PyExporter>(m, "_Exporter")
      .def_static(
          "from_format",
          [](const std::string& f) { return PyExporter{exporters::AutoExporter::from_format(f)}; },
          py::arg("format"))
      .def_static(
          "from_config",
          [](const ConfigPtr& c) { return PyExporter{exporters::AutoExporter::from_config(*c)}; },
          py::arg("config"))
      .def_property_readonly("backend", [](const PyExporter& e) { return e.exporter->backend(); })
      // model.forward on `inputs` (or, when empty, the config's example inputs).
      .def(
          "export",
          [](PyExporter& e, PyModel& model, const std::map<std::string, Tensor>& inputs,
             const ConfigPtr& config) {
            return as_export_errors([&] {
              if (inputs.empty()) return e.exporter->export_(*model.model, *config);
              return e.exporter->export_(*model.model, model_inputs(model, inputs), *config);
            });
          },
          py::arg("model"), py::arg("inputs"), py::arg("config"),
          py::call_guard<py::gil_scoped_release>())
      .def(
          "export_for_generation",
          [](PyExporter& e, PyModel& model, const ConfigPtr& config, int64_t max_cache_len,
             int64_t batch, bool multi_token_decode, bool dynamic_cache_len) {
            auto c = std::make_shared<Components>();
            c->options.max_cache_len = max_cache_len;
            c->options.batch = batch;
            c->options.multi_token_decode = multi_token_decode;
            c->options.dynamic_cache_len = dynamic_cache_len;
            c->model_folder = model.folder;
            c->options.model_folder = model.folder;
            c->architecture = model.model->architecture();
            c->parts = as_export_errors(
                [&] { return e.exporter->export_for_generation(*model.model, *config, c->options); });
            return c;
          },
          py::arg("model"), py::arg("config"), py::arg("max_cache_len"), py::arg("batch"),
          py::arg("multi_token_decode"), py::arg("dynamic_cache_len"),
          py::call_guard<py::gil_scoped_release>())
      .def(
          "lower",
          [](PyExporter& e, const std::shared_ptr<ExportedProgram>& p, const ConfigPtr& config) {
            return e.exporter->lower(*p, *config);
          },
          py::arg("program"), py::arg("config"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace ingot::python
