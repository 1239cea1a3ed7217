// Python bindings of quantization: QConfig / QConfigMapping with PyTorch's
// names, and octet.quantize with calibration batches drawn from any Python
// iterable (a torch DataLoader works).
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "python/src/errors.h"
#include "python/src/model.h"
#include "python/src/observer_options.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/dynamic.h"
#include "quant/fused_ops.h"
#include "quant/nothing_quantized.h"
#include "quant/numerics_profile.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"
#include "quant/weight_only.h"

namespace octet::python {

namespace py = pybind11;

namespace {

// Calibrates `prepared` on every batch of `calib`, compiling the fused graph
// once per distinct input shapes.
void CalibrateFromIterable(PreparedGraph &prepared, const Model &model,
                           const py::handle &calib) {
  // The prepared graph keeps the float graph's inputs, so the float model
  // converts the batches.
  std::map<std::vector<std::vector<int64_t>>, std::shared_ptr<Executor>>
      executors;
  const OpRegistry registry = QuantFloatRegistry();
  size_t count = 0;
  for (const py::handle item : calib) {
    std::vector<Tensor> batch = model.BatchFromItem(item, count);
    py::gil_scoped_release release;
    std::vector<std::vector<int64_t>> key;
    CompileOptions options;
    const std::vector<std::string> names = model.input_names();
    for (size_t k = 0; k < batch.size(); ++k) {
      key.push_back(batch[k].shape().dims());
      options.input_shapes.emplace_back(names[k], batch[k].shape());
    }
    auto it = executors.find(key);
    if (it == executors.end()) {
      Result<Executor> exec = Executor::Compile(
          prepared.graph(), model.context(), registry, options);
      if (!exec.ok())
        throw StatusError(exec.status().WithContext(
            fmt::format("calibration batch {}", count)));
      it = executors.emplace(key, std::make_shared<Executor>(std::move(*exec)))
               .first;
    }
    const std::vector<Tensor> one[] = {std::move(batch)};
    Status s = Calibrate(prepared, *it->second,
                         std::span<const std::vector<Tensor>>(one));
    if (!s.ok())
      throw StatusError(
          s.WithContext(fmt::format("calibration batch {}", count)));
    ++count;
  }
  if (count == 0) {
    throw StatusError(InvalidArgument("static quantization of '{}' needs "
                                      "calibration data: calib gave no batches",
                                      model.source()));
  }
}

std::shared_ptr<Model>
Quantize(const Model &model, const py::object &calib, const std::string &mode,
         const std::string &backend, const std::string &profile_name,
         std::optional<QConfigMapping> qconfig_mapping, bool per_channel,
         const std::vector<std::string> &skip) {
  const std::string where =
      fmt::format("failed to quantize '{}'", model.source());
  if (model.is_octet())
    throw StatusError(
        InvalidArgument("{}: it is already quantized (a .octet model)", where));
  if (mode != "static" && mode != "dynamic" && mode != "weight-only") {
    throw StatusError(InvalidArgument(
        "mode must be 'static', 'dynamic' or 'weight-only', got '{}'", mode));
  }
  const NumericsProfile profile = Unwrap(ParseNumericsProfile(profile_name));
  QConfigMapping mapping;
  if (qconfig_mapping) {
    mapping = *qconfig_mapping;
  } else if (mode == "dynamic") {
    mapping.SetGlobal(GetDefaultDynamicQConfig(per_channel));
  } else {
    mapping.SetGlobal(Unwrap(GetDefaultQConfig(backend)));
  }
  for (const std::string &scope : skip) {
    const std::vector<std::string> nodes = NodesInScope(model.graph(), scope);
    if (nodes.empty()) {
      throw StatusError(InvalidArgument("skip: '{}' has no node named '{}' or "
                                        "under it (Model.nodes lists them)",
                                        model.source(), scope));
    }
    for (const std::string &node : nodes)
      mapping.SetModuleName(node, std::nullopt);
  }

  Graph quantized;
  std::string warning;
  if (mode == "static") {
    if (calib.is_none()) {
      throw StatusError(
          InvalidArgument("{}: static quantization needs calibration data "
                          "(calib=an iterable of "
                          "batches)",
                          where));
    }
    PrepareOptions prepare_options;
    prepare_options.context = &model.context();
    PreparedGraph prepared = [&] {
      py::gil_scoped_release release;
      Result<PreparedGraph> p =
          Prepare(model.graph(), mapping, prepare_options);
      if (!p.ok())
        throw StatusError(p.status().WithContext(where));
      return std::move(*p);
    }();
    try {
      CalibrateFromIterable(prepared, model, calib);
    } catch (const StatusError &e) {
      throw StatusError(e.status().WithContext(where));
    }
    py::gil_scoped_release release;
    ConvertOptions options;
    options.profile = profile;
    ConvertReport report;
    Result<Graph> g = Convert(prepared, options, &report);
    if (!g.ok())
      throw StatusError(g.status().WithContext(where));
    warning = NothingQuantizedWarning(prepared.graph(), report);
    quantized = std::move(*g);
  } else if (mode == "dynamic") {
    py::gil_scoped_release release;
    QuantizeDynamicOptions options;
    options.context = &model.context();
    QuantizeDynamicReport report;
    Result<Graph> g = QuantizeDynamic(model.graph(), mapping, options, &report);
    if (!g.ok())
      throw StatusError(g.status().WithContext(where));
    warning = NothingQuantizedWarning(report);
    quantized = std::move(*g);
  } else {
    py::gil_scoped_release release;
    Result<Graph> g = QuantizeWeightOnly(model.graph(), mapping);
    if (!g.ok())
      throw StatusError(g.status().WithContext(where));
    quantized = std::move(*g);
  }
  if (!warning.empty())
    PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1);
  OctetMetadata metadata = {
      {"producer", "octet python"},
      {"source", model.source()},
      {"mode", mode},
      {"backend", qconfig_mapping ? "qconfig_mapping" : backend},
      {"profile", profile_name}};
  return std::make_shared<Model>(
      std::move(quantized), true, std::move(metadata),
      model.source() + " (int8)", model.shared_context());
}

std::optional<QConfig> OptionalQConfig(const py::handle &h) {
  if (h.is_none())
    return std::nullopt;
  return h.cast<QConfig>();
}

} // namespace

void BindQuantize(py::module_ &m) {
  py::class_<ObserverSpec>(
      m, "ObserverSpec",
      "An observer factory: PyTorch's SomeObserver.with_args(...).")
      .def(py::init([](const std::string &kind, const py::kwargs &kwargs) {
             ObserverSpec s{Unwrap(ParseObserverKind(kind)),
                            ObserverOptionsFromKwargs(kwargs)};
             Unwrap(s.Make()); // validate now, not at quantize time
             return s;
           }),
           py::arg("kind"))
      .def("__repr__", &ObserverSpec::ToString)
      .def("__eq__", &ObserverSpec::operator==);
  py::class_<QConfig>(m, "QConfig",
                      "torch.ao.quantization.QConfig: an activation and a "
                      "weight observer factory.")
      .def(py::init(
               [](const ObserverSpec &activation, const ObserverSpec &weight) {
                 QConfig q{activation, weight};
                 ThrowIfError(q.Validate());
                 return q;
               }),
           py::arg("activation"), py::arg("weight"))
      .def_readonly("activation", &QConfig::activation)
      .def_readonly("weight", &QConfig::weight)
      .def("__repr__", &QConfig::ToString)
      .def("__eq__", [](const QConfig &a, const QConfig &b) { return a == b; });
  py::class_<QConfigMapping>(
      m, "QConfigMapping",
      "torch.ao.quantization.QConfigMapping; None keeps nodes float.")
      .def(py::init<>())
      .def(
          "set_global",
          [](QConfigMapping &q, const py::handle &c) -> QConfigMapping & {
            return q.SetGlobal(OptionalQConfig(c));
          },
          py::arg("qconfig"), py::return_value_policy::reference_internal)
      .def(
          "set_object_type",
          [](QConfigMapping &q, const std::string &op,
             const py::handle &c) -> QConfigMapping & {
            return q.SetObjectType(op, OptionalQConfig(c));
          },
          py::arg("op_type"), py::arg("qconfig"),
          py::return_value_policy::reference_internal)
      .def(
          "set_module_name",
          [](QConfigMapping &q, const std::string &name,
             const py::handle &c) -> QConfigMapping & {
            return q.SetModuleName(name, OptionalQConfig(c));
          },
          py::arg("name"), py::arg("qconfig"),
          py::return_value_policy::reference_internal);
  m.def(
      "get_default_qconfig",
      [](const std::string &backend) {
        return Unwrap(GetDefaultQConfig(backend));
      },
      py::arg("backend") = "x86",
      "PyTorch 1.13's get_default_qconfig (x86, fbgemm, qnnpack, onednn; "
      "symmetric).");
  m.def("get_default_dynamic_qconfig", &GetDefaultDynamicQConfig,
        py::arg("per_channel") = true);
  m.def(
      "get_default_qconfig_mapping",
      [](const std::string &backend) {
        return Unwrap(GetDefaultQConfigMapping(backend));
      },
      py::arg("backend") = "x86");
  m.def("quantize", &Quantize, py::arg("model"), py::arg("calib") = py::none(),
        py::arg("mode") = "static", py::arg("backend") = "x86",
        py::arg("profile") = "reference",
        py::arg("qconfig_mapping") = py::none(), py::arg("per_channel") = true,
        py::arg("skip") = std::vector<std::string>{},
        "Quantizes a float model: static (calibrated on `calib`), dynamic or "
        "weight-only. Returns the int8 model.");
}

} // namespace octet::python
