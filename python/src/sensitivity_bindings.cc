// Python binding of the sensitivity analysis (numeric_suite/sensitivity.h):
// which nodes to keep float.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "numeric_suite/sensitivity.h"
#include "python/src/array_bridge.h"
#include "python/src/errors.h"
#include "python/src/model.h"
#include "quant/qconfig_mapping.h"

namespace octet::python {

namespace py = pybind11;

namespace {

std::vector<std::vector<Tensor>> SensitivityBatches(const Model &model,
                                         const py::handle &batches) {
  std::vector<std::vector<Tensor>> out;
  for (const py::handle item : batches)
    out.push_back(model.BatchFromItem(item, out.size()));
  return out;
}

py::object Sensitivity(const Model &model, const py::handle &calib,
                       const py::handle &evaluation, const std::string &backend,
                       std::optional<QConfigMapping> qconfig_mapping,
                       std::optional<double> target, const py::object &labels,
                       int latency_runs,
                       const std::vector<std::string> &nodes) {
  if (model.is_octet()) {
    throw StatusError(
        InvalidArgument("sensitivity needs the float model; '{}' is quantized",
                        model.source()));
  }
  const QConfigMapping mapping =
      qconfig_mapping ? *qconfig_mapping
                      : Unwrap(GetDefaultQConfigMapping(backend));
  std::vector<std::vector<Tensor>> calibration = SensitivityBatches(model, calib);
  std::vector<std::vector<Tensor>> eval = SensitivityBatches(model, evaluation);
  SensitivityOptions options;
  if (!labels.is_none()) {
    Tensor t = TensorFromArray(labels, "labels");
    if (t.dtype() != DType::kS32) {
      throw StatusError(InvalidArgument(
          "labels must be int32 class indices (use .astype(numpy.int32))"));
    }
    options.metric = AccuracyMetric(std::move(t));
  }
  options.target = target;
  options.prepare.context = &model.context();
  options.context = &model.context();
  options.latency_runs = latency_runs;
  options.nodes = nodes;
  nlohmann::json json;
  {
    py::gil_scoped_release release;
    json = SensitivityJson(Unwrap(AnalyzeSensitivity(
        model.graph(), mapping, calibration, eval, options)));
  }
  return py::module_::import("json").attr("loads")(json.dump());
}

} // namespace

void BindSensitivity(py::module_ &m) {
  m.def("sensitivity", &Sensitivity, py::arg("float_model"), py::arg("calib"),
        py::arg("eval"), py::arg("backend") = "x86",
        py::arg("qconfig_mapping") = py::none(), py::arg("target") = py::none(),
        py::arg("labels") = py::none(), py::arg("latency_runs") = 0,
        py::arg("nodes") = std::vector<std::string>{},
        "Quantizes one node at a time (and all but one) and ranks the nodes; "
        "with `target` (output SQNR in dB, or "
        "accuracy with `labels`) proposes which to keep float. Returns the "
        "report's 'sensitivity' section.");
}

} // namespace octet::python
