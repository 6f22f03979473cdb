// C++ exceptions -> Python exceptions, message unchanged:
//   ValueError, ShapeError -> ValueError      DTypeError        -> TypeError
//   IoError                -> OSError         NotSupportedError -> NotImplementedError
//   InternalError, others  -> RuntimeError    ExportFailure     -> ingot.ExportError (ValueError)
#include "bindings.h"

namespace ingot::python {

void bind_errors(py::module_& m) {
  static py::exception<ExportFailure> export_error(m, "ExportError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ExportFailure& e) {
      PyErr_SetString(export_error.ptr(), e.what());
    } catch (const ingot::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ingot::ShapeError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ingot::DTypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ingot::IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const ingot::NotSupportedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const ingot::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace ingot::python
