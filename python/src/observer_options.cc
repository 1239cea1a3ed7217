// Observer options from Python keywords (see observer_options.h).
#include "python/src/observer_options.h"

#include <string>

#include "python/src/errors.h"

namespace octet::python {

namespace py = pybind11;

namespace {

// torch.quint8 prints as "torch.quint8": the part after "torch." is PyTorch's
// name.
std::string TorchName(const py::handle &value) {
  std::string s = py::str(value).cast<std::string>();
  if (s.rfind("torch.", 0) == 0)
    s = s.substr(6);
  return s;
}

} // namespace

DType DTypeFromPython(const py::handle &value) {
  return Unwrap(ParseDType(TorchName(value)));
}

QScheme QSchemeFromPython(const py::handle &value) {
  return Unwrap(ParseQScheme(TorchName(value)));
}

ObserverOptions ObserverOptionsFromKwargs(const py::dict &kwargs) {
  ObserverOptions o;
  for (const auto &[key, value] : kwargs) {
    const std::string k = py::str(key).cast<std::string>();
    if (value.is_none())
      continue; // PyTorch's "not given"
    if (k == "dtype") {
      o.dtype = DTypeFromPython(value);
    } else if (k == "qscheme") {
      o.qscheme = QSchemeFromPython(value);
    } else if (k == "reduce_range") {
      o.reduce_range = value.cast<bool>();
    } else if (k == "quant_min") {
      o.quant_min = value.cast<int64_t>();
    } else if (k == "quant_max") {
      o.quant_max = value.cast<int64_t>();
    } else if (k == "eps") {
      o.eps = value.cast<double>();
    } else if (k == "averaging_constant") {
      o.averaging_constant = value.cast<double>();
    } else if (k == "ch_axis") {
      o.ch_axis = value.cast<int>();
    } else if (k == "bins") {
      o.bins = value.cast<int64_t>();
    } else if (k == "upsample_rate") {
      o.upsample_rate = value.cast<int64_t>();
    } else if (k == "histogram_variant") {
      o.histogram_variant =
          Unwrap(ParseHistogramVariant(value.cast<std::string>()));
    } else if (k == "percentile") {
      o.percentile = value.cast<double>();
    } else if (k == "skip_non_finite") {
      o.skip_non_finite = value.cast<bool>();
    } else {
      throw py::type_error("observer got an unexpected keyword argument '" + k +
                           "'");
    }
  }
  return o;
}

} // namespace octet::python
