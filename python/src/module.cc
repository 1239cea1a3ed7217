// The compiled extension octet._octet: registers errors and the bindings of
// each area (python/octet wraps them).
#include <pybind11/pybind11.h>

#include "core/version.h"
#include "python/src/errors.h"
#include "python/src/model.h"

PYBIND11_MODULE(_octet, m) {
  m.doc() =
      "octet: int8 quantization engine (compiled part; use the octet package)";
  m.attr("__version__") = octet::Version();
  octet::python::RegisterErrors(m);
  octet::python::BindModel(m);
  octet::python::BindQuantize(m);
  octet::python::BindObservers(m);
  octet::python::BindTensorOps(m);
  octet::python::BindNumericSuite(m);
  octet::python::BindVectors(m);
  octet::python::BindSensitivity(m);
}
