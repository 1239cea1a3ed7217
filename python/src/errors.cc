// octet.Error and the translation of StatusError into it.
#include "python/src/errors.h"

namespace octet::python {

namespace py = pybind11;

void RegisterErrors(py::module_ &m) {
  // Leaked on purpose: the exception type lives as long as the interpreter
  // (pybind11's own pattern).
  static py::handle error_type =
      PyErr_NewExceptionWithDoc("octet.Error",
                                "An error from octet: the message names the "
                                "file, node, tensor or option at fault.",
                                PyExc_RuntimeError, nullptr);
  m.add_object("Error", error_type);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const StatusError &e) {
      py::gil_scoped_acquire gil;
      py::object instance =
          py::reinterpret_borrow<py::object>(error_type)(e.status().message());
      instance.attr("code") = StatusCodeName(e.status().code());
      PyErr_SetObject(error_type.ptr(), instance.ptr());
    }
  });
}

} // namespace octet::python
