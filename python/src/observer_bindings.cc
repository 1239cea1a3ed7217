// Python bindings of observers (octet._octet.Observer, wrapped with PyTorch's
// class names in octet/observers.py).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "observers/observer_factory.h"
#include "python/src/array_bridge.h"
#include "python/src/errors.h"
#include "python/src/model.h"
#include "python/src/observer_options.h"

namespace octet::python {

namespace py = pybind11;

namespace {

// One observer; the mutex makes calls from several Python threads safe (octet's
// observers are one-thread objects).
struct PyObserver {
  std::unique_ptr<Observer> observer;
  mutable std::mutex mutex;
};

std::shared_ptr<PyObserver> Wrap(std::unique_ptr<Observer> observer) {
  auto w = std::make_shared<PyObserver>();
  w->observer = std::move(observer);
  return w;
}

py::object JsonToPython(const nlohmann::json &j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

nlohmann::json JsonFromPython(const py::handle &object) {
  const std::string text =
      py::module_::import("json").attr("dumps")(object).cast<std::string>();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw StatusError(InvalidArgument("observer state is not JSON"));
  return j;
}

py::array Floats(const std::vector<float> &v, bool scalar) {
  py::array_t<float> a(scalar
                           ? std::vector<py::ssize_t>{}
                           : std::vector<py::ssize_t>{py::ssize_t(v.size())});
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::tuple CalculateQParams(const PyObserver &w) {
  std::lock_guard<std::mutex> lock(w.mutex);
  QParams q = Unwrap(w.observer->CalculateQParams());
  py::array_t<float> scale(py::ssize_t(q.scales().size()));
  py::array_t<int32_t> zero_point(py::ssize_t(q.zero_points().size()));
  std::copy(q.scales().begin(), q.scales().end(), scale.mutable_data());
  std::copy(q.zero_points().begin(), q.zero_points().end(),
            zero_point.mutable_data());
  return py::make_tuple(scale, zero_point);
}

} // namespace

void BindObservers(py::module_ &m) {
  py::class_<PyObserver, std::shared_ptr<PyObserver>>(
      m, "Observer",
      "An octet observer (kind: 'minmax', 'MinMaxObserver', ...).")
      .def(py::init([](const std::string &kind, const py::kwargs &kwargs) {
             return Wrap(
                 Unwrap(MakeObserver(kind, ObserverOptionsFromKwargs(kwargs))));
           }),
           py::arg("kind"))
      .def(
          "observe",
          [](PyObserver &w, const py::handle &x, const std::string &name) {
            Tensor t = F32TensorFromArray(x, name);
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(w.mutex);
            ThrowIfError(w.observer->Observe(t, name));
          },
          py::arg("x"), py::arg("name") = "tensor",
          "Observes a float32 array (other dtypes are converted).")
      .def("calculate_qparams", &CalculateQParams,
           "(scale float32[n], zero_point int32[n]); n = 1 per tensor.")
      .def(
          "merge",
          [](PyObserver &w, const PyObserver &other) {
            if (&w == &other)
              throw StatusError(
                  InvalidArgument("cannot merge an observer with itself"));
            std::scoped_lock lock(w.mutex, other.mutex);
            ThrowIfError(w.observer->Merge(*other.observer));
          },
          py::arg("other"))
      .def("reset",
           [](PyObserver &w) {
             std::lock_guard<std::mutex> lock(w.mutex);
             w.observer->Reset();
           })
      .def("clone",
           [](const PyObserver &w) {
             std::lock_guard<std::mutex> lock(w.mutex);
             return Wrap(w.observer->Clone());
           })
      .def(
          "state",
          [](const PyObserver &w) {
            std::lock_guard<std::mutex> lock(w.mutex);
            return JsonToPython(w.observer->SaveState());
          },
          "The observer's options and state as a JSON-ready dict "
          "(octet.observer_from_state reads it back).")
      .def("load_state",
           [](PyObserver &w, const py::handle &state) {
             nlohmann::json j = JsonFromPython(state);
             std::lock_guard<std::mutex> lock(w.mutex);
             ThrowIfError(w.observer->LoadState(j));
           })
      .def_property_readonly("kind",
                             [](const PyObserver &w) {
                               return ObserverClassName(w.observer->kind());
                             })
      .def_property_readonly("dtype",
                             [](const PyObserver &w) {
                               return DTypeName(w.observer->options().dtype);
                             })
      .def_property_readonly("qscheme",
                             [](const PyObserver &w) {
                               return QSchemeName(
                                   w.observer->options().qscheme);
                             })
      .def_property_readonly(
          "quant_min",
          [](const PyObserver &w) { return w.observer->quant_min(); })
      .def_property_readonly(
          "quant_max",
          [](const PyObserver &w) { return w.observer->quant_max(); })
      .def_property_readonly(
          "ch_axis",
          [](const PyObserver &w) { return w.observer->options().ch_axis; })
      .def_property_readonly("min_val",
                             [](const PyObserver &w) {
                               std::lock_guard<std::mutex> lock(w.mutex);
                               return Floats(
                                   w.observer->min_val(),
                                   !IsPerChannelKind(w.observer->kind()));
                             })
      .def_property_readonly("max_val",
                             [](const PyObserver &w) {
                               std::lock_guard<std::mutex> lock(w.mutex);
                               return Floats(
                                   w.observer->max_val(),
                                   !IsPerChannelKind(w.observer->kind()));
                             })
      .def_property_readonly(
          "has_observations",
          [](const PyObserver &w) { return w.observer->has_observations(); })
      .def_property_readonly(
          "num_batches",
          [](const PyObserver &w) { return w.observer->num_batches(); })
      .def_property_readonly("num_skipped", [](const PyObserver &w) {
        return w.observer->num_skipped();
      });
  m.def(
      "observer_from_state",
      [](const py::handle &state) {
        return Wrap(Unwrap(ObserverFromState(JsonFromPython(state))));
      },
      py::arg("state"),
      "The observer that Observer.state() described, with its state loaded.");
}

} // namespace octet::python
