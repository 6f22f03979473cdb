// The pieces of the ingot._ingot extension module, one file per concept:
//   errors.cpp      C++ exceptions -> Python exceptions (same messages)
//   tensors.cpp     ingot::Tensor <-> Python buffers without copies (_Tensor)
//   program.cpp     ExportedProgram, its graph / signature / ranges, ProgramModule, save / load
//   models.cpp      from_pretrained, eager forward, export (torch.export's entry), Tokenizer
//   exporters.cpp   export configs, exporters, artifacts, generation components
//   generation.cpp  Generator: the decode loop, streaming, with the GIL released
// The Python layer (python/src/ingot/) turns NumPy / DLPack arrays into _Tensor and back
// and gives the torch- / transformers-like names.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>

#include "ingot/core/tensor.h"
#include "ingot/exporters/exporter.h"
#include "ingot/export/program.h"
#include "ingot/models/model.h"

namespace py = pybind11;

namespace ingot::python {

void bind_errors(py::module_& m);
void bind_tensors(py::module_& m);
void bind_program(py::module_& m);
void bind_models(py::module_& m);
void bind_exporters(py::module_& m);
void bind_generation(py::module_& m);

// Thrown by the export entry points for a failed trace (a guard the spec does not imply,
// a bad spec): becomes ingot.ExportError, a ValueError subclass, with the same message.
class ExportFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `f` and rethrows ingot::ValueError / ShapeError as ExportFailure.
template <typename F>
auto as_export_errors(F&& f) {
  try {
    return f();
  } catch (const ingot::ValueError& e) {
    throw ExportFailure(e.what());
  } catch (const ingot::ShapeError& e) {
    throw ExportFailure(e.what());
  }
}

// A loaded Hugging Face model and the folder it came from (generation directories copy
// the tokenizer files from it).
struct PyModel {
  std::shared_ptr<models::PretrainedModel> model;
  std::string folder;
};

// ModelInputs from {"input_ids": tensor, ...}; ValueError naming an unknown key and the
// model's input names.
models::ModelInputs model_inputs(const PyModel& m, const std::map<std::string, Tensor>& inputs);

// export_for_generation's result and what writing its directory (or a Generator) needs.
struct Components {
  exporters::GenerationExport parts;
  exporters::GenerationExportOptions options;
  std::string model_folder, architecture;
};

// An ExportedProgram shared between the Python objects that show it.
using ProgramPtr = std::shared_ptr<const ExportedProgram>;

}  // namespace ingot::python
