// The extension module ingot._ingot: version and the bindings of each part (bindings.h).
#include "bindings.h"
#include "ingot/core/version.h"

PYBIND11_MODULE(_ingot, m) {
  m.doc() = "ingot's C++ core (use the `ingot` package, not this module)";
  m.attr("__version__") = ingot::version();
  ingot::python::bind_errors(m);
  ingot::python::bind_tensors(m);
  ingot::python::bind_program(m);
  ingot::python::bind_models(m);
  ingot::python::bind_exporters(m);
  ingot::python::bind_generation(m);
}
