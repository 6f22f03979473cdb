// Hugging Face models (from_pretrained, the eager forward), ingot.export (torch.export's
// entry point: a model's forward on named example inputs with a dynamic_shapes spec,
// through the native exporter's stages like `ingot export`) and the tokenizer.
#include <pybind11/stl/filesystem.h>

#include <algorithm>

#include "bindings.h"
#include "ingot/exporters/exporter.h"
#include "ingot/text/tokenizer.h"

namespace ingot::python {

models::ModelInputs model_inputs(const PyModel& m, const std::map<std::string, Tensor>& inputs) {
  models::ModelInputs in;
  const std::vector<std::string> accepted = m.model->input_names();
  for (const auto& [name, t] : inputs) {
    const bool known = std::find(accepted.begin(), accepted.end(), name) != accepted.end();
    INGOT_CHECK(known, ValueError, "[ingot] {} takes no input named '{}' (inputs: {})",
                m.model->architecture(), name, fmt::join(accepted, ", "));
    if (name == "input_ids") in.input_ids = t;
    else if (name == "attention_mask") in.attention_mask = t;
    else if (name == "position_ids") in.position_ids = t;
    else if (name == "token_type_ids") in.token_type_ids = t;
    else INGOT_THROW(NotSupportedError, "[ingot] input '{}' is not supported from Python", name);
  }
  return in;
}

void bind_models(py::module_& m) {
  py::class_<PyModel>(m, "_Model")
      .def_property_readonly("architecture", [](const PyModel& p) { return p.model->architecture(); })
      .def_property_readonly("dtype",
                             [](const PyModel& p) { return std::string(dtype_name(p.model->compute_dtype())); })
      .def_property_readonly("input_names", [](const PyModel& p) { return p.model->input_names(); })
      .def_readonly("folder", &PyModel::folder)
      // The eager forward: {"input_ids": ...} -> {"logits": ...}.
      .def(
          "forward",
          [](const PyModel& p, const std::map<std::string, Tensor>& inputs) {
            return p.model->forward(model_inputs(p, inputs)).named();
          },
          py::arg("inputs"), py::call_guard<py::gil_scoped_release>());

  m.def(
      "from_pretrained",
      [](const std::string& folder, const std::optional<std::string>& dtype) {
        models::LoadOptions o;
        if (dtype) o.compute_dtype = parse_dtype(*dtype);
        return PyModel{models::from_pretrained(folder, o), folder};
      },
      py::arg("folder"), py::arg("dtype") = py::none(), py::call_guard<py::gil_scoped_release>());

  // The trace: the native exporter (patches, dynamic shapes, trace, fixes) on the given
  // inputs. `dynamic_shapes_json` is DynamicShapes::from_json's dict by input name.
  m.def(
      "export",
      [](PyModel& p, const std::map<std::string, Tensor>& inputs,
         const std::string& dynamic_shapes_json, bool dynamic, bool prefer_deferred) {
        exporters::NativeExportConfig config;
        config.dynamic = dynamic;
        config.dynamic_shapes_json = dynamic_shapes_json;
        config.prefer_deferred_runtime_asserts_over_guards = prefer_deferred;
        return as_export_errors([&] {
          auto artifact = exporters::NativeExporter().export_(*p.model, model_inputs(p, inputs), config);
          return std::make_shared<ExportedProgram>(std::move(artifact->program));
        });
      },
      py::arg("model"), py::arg("inputs"), py::arg("dynamic_shapes_json") = "",
      py::arg("dynamic") = false, py::arg("prefer_deferred_runtime_asserts_over_guards") = false,
      py::call_guard<py::gil_scoped_release>());

  py::class_<text::Tokenizer, std::shared_ptr<text::Tokenizer>>(m, "Tokenizer")
      .def_static(
          "from_file",
          [](const std::filesystem::path& p) { return text::Tokenizer::from_file(p.string()); },
          py::arg("path"))
      .def_static(
          "from_pretrained",
          [](const std::filesystem::path& p) { return text::Tokenizer::from_folder(p.string()); },
          py::arg("folder"),
          "Reads FOLDER/tokenizer.json (a model folder or a generation directory)")
      .def(
          "encode",
          [](const text::Tokenizer& t, const std::string& text, bool add_special_tokens) {
            return t.encode(text, add_special_tokens);
          },
          py::arg("text"), py::arg("add_special_tokens") = true)
      .def(
          "decode",
          [](const text::Tokenizer& t, const std::vector<int64_t>& ids, bool skip) {
            return t.decode(ids, skip);
          },
          py::arg("ids"), py::arg("skip_special_tokens") = false)
      .def("token_to_id", &text::Tokenizer::token_to_id, py::arg("token"));
}

}  // namespace ingot::python
