// Python bindings of the numeric suite (wrapped as octet.ns): compare_weights,
// compare_model_outputs, compare_model_stub with torch.ao.ns's result shapes,
// the per-layer figures of `octet compare`, and compute_error.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numeric_suite/compare_model.h"
#include "numeric_suite/compare_weights.h"
#include "numeric_suite/graph_matching.h"
#include "numeric_suite/metrics.h"
#include "python/src/array_bridge.h"
#include "python/src/errors.h"
#include "python/src/model.h"

namespace octet::python {

namespace py = pybind11;

namespace {

std::string Where(const Model &float_model, const Model &quantized) {
  return fmt::format("failed to compare '{}' with '{}'", quantized.source(),
                     float_model.source());
}

void CheckPair(const Model &float_model, const Model &quantized) {
  if (float_model.is_octet()) {
    throw StatusError(
        InvalidArgument("'{}' is a .octet model: give the float model first",
                        float_model.source()));
  }
  if (!quantized.is_octet()) {
    throw StatusError(InvalidArgument(
        "'{}' is a float model: give the quantized model second",
        quantized.source()));
  }
}

std::vector<std::vector<Tensor>> Batches(const Model &float_model,
                                         const py::handle &batches) {
  std::vector<std::vector<Tensor>> out;
  for (const py::handle item : batches)
    out.push_back(float_model.BatchFromItem(item, out.size()));
  if (out.empty())
    throw StatusError(InvalidArgument("no batches to compare on"));
  return out;
}

// Both graphs compiled for comparison and every batch run (the GIL released).
std::unique_ptr<PreparedModelOutputs> RunComparison(const Model &float_model,
                                                    const Model &quantized,
                                                    const py::handle &batches,
                                                    bool shadow) {
  CheckPair(float_model, quantized);
  std::vector<std::vector<Tensor>> inputs = Batches(float_model, batches);
  py::gil_scoped_release release;
  CompareOptions options;
  options.context = &float_model.context();
  options.shadow = shadow;
  const std::string where = Where(float_model, quantized);
  auto prepared =
      PrepareModelOutputs(float_model.graph(), quantized.graph(), options);
  if (!prepared.ok())
    throw StatusError(prepared.status().WithContext(where));
  for (size_t b = 0; b < inputs.size(); ++b) {
    if (Status s = (*prepared)->Run(inputs[b]); !s.ok()) {
      throw StatusError(s.WithContext(fmt::format("{}: batch {}", where, b)));
    }
  }
  return std::move(*prepared);
}

// {name: {"float": [array per batch], "quantized": [...]}} from a storing
// logger (torch.ao.ns's act_compare_dict).
py::dict FromStoringLogger(const Logger &logger) {
  const auto *storing = dynamic_cast<const StoringLogger *>(&logger);
  if (storing == nullptr)
    throw StatusError(Internal("the comparison's logger keeps no tensors"));
  py::dict result;
  for (const std::string &name : storing->names()) {
    const StoringLogger::Stats *stats = Unwrap(storing->stats(name));
    py::list f, q;
    for (const Tensor &t : stats->float_values)
      f.append(ArrayFromTensor(t));
    for (const Tensor &t : stats->quantized_values)
      q.append(ArrayFromTensor(t));
    py::dict entry;
    entry["float"] = f;
    entry["quantized"] = q;
    result[py::str(name)] = entry;
  }
  return result;
}

py::dict CompareWeightsPy(const Model &float_model, const Model &quantized) {
  CheckPair(float_model, quantized);
  std::vector<WeightComparison> weights;
  {
    py::gil_scoped_release release;
    const std::string where = Where(float_model, quantized);
    Result<Graph> fused = FloatReferenceGraph(float_model.graph(), true);
    if (!fused.ok())
      throw StatusError(fused.status().WithContext(where));
    Result<std::vector<WeightComparison>> w =
        CompareWeights(*fused, quantized.graph());
    if (!w.ok())
      throw StatusError(w.status().WithContext(where));
    weights = std::move(*w);
  }
  py::dict result;
  for (const WeightComparison &w : weights) {
    py::dict entry;
    entry["float"] = ArrayFromTensor(w.float_weight);
    entry["quantized"] = ArrayFromTensor(w.dequantized);
    entry["int"] = ArrayFromTensor(w.quantized);
    entry["node"] = w.node;
    entry["op"] = w.op;
    result[py::str(w.name)] = entry;
  }
  return result;
}

py::dict Comparison(const ValueComparison &v) {
  py::dict d;
  d["node"] = v.node;
  d["op"] = v.op;
  d["float_op"] = v.float_op;
  d["sqnr"] = v.sqnr_db();
  d["normalized_l2"] = v.sums.NormalizedL2();
  d["max_abs_error"] = v.sums.max_abs_err;
  d["max_abs_error_lsb"] = v.max_abs_error_lsb();
  if (v.qparams) {
    d["scale"] = v.qparams->scale();
    d["zero_point"] = v.qparams->zero_point();
  }
  if (v.clipping && v.clipping->total > 0) {
    d["clipped_fraction"] = static_cast<double>(v.clipping->clipped) /
                            static_cast<double>(v.clipping->total);
  }
  if (v.max_abs_accumulator)
    d["max_abs_accumulator"] = *v.max_abs_accumulator;
  return d;
}

// The figures of `octet compare`'s table: per layer the worst weight SQNR, the
// propagated activation SQNR and the shadow SQNR, and each output's SQNR.
py::dict ComparePy(const Model &float_model, const Model &quantized,
                   const py::handle &batches) {
  py::dict weights = CompareWeightsPy(float_model, quantized);
  std::unique_ptr<PreparedModelOutputs> p =
      RunComparison(float_model, quantized, batches, true);
  py::dict weight_sqnr;
  for (const auto &[name, entry] : weights) {
    const py::dict e = entry.cast<py::dict>();
    const std::string node = e["node"].cast<std::string>();
    const double db = Unwrap(Sqnr(F32TensorFromArray(e["float"], "float"),
                                  F32TensorFromArray(e["quantized"], "q")));
    if (!weight_sqnr.contains(node) ||
        db < weight_sqnr[py::str(node)].cast<double>()) {
      weight_sqnr[py::str(node)] = db;
    }
  }
  py::dict activations, shadow, outputs;
  for (const ValueComparison &v : p->activations())
    activations[py::str(v.name)] = Comparison(v);
  for (const ValueComparison &v : p->shadow())
    shadow[py::str(v.name)] = Comparison(v);
  for (const ValueComparison &v : p->outputs())
    outputs[py::str(v.name)] = Comparison(v);
  py::dict result;
  result["weights"] = weight_sqnr;
  result["activations"] = activations;
  result["shadow"] = shadow;
  result["outputs"] = outputs;
  return result;
}

} // namespace

void BindNumericSuite(py::module_ &m) {
  m.def("compare_weights", &CompareWeightsPy, py::arg("float_model"),
        py::arg("quantized_model"));
  m.def(
      "compare_model_outputs",
      [](const Model &f, const Model &q, const py::handle &batches) {
        std::unique_ptr<PreparedModelOutputs> p =
            RunComparison(f, q, batches, false);
        return FromStoringLogger(p->activation_logger());
      },
      py::arg("float_model"), py::arg("quantized_model"), py::arg("batches"));
  m.def(
      "compare_model_stub",
      [](const Model &f, const Model &q, const py::handle &batches) {
        std::unique_ptr<PreparedModelOutputs> p =
            RunComparison(f, q, batches, true);
        return FromStoringLogger(p->shadow_logger());
      },
      py::arg("float_model"), py::arg("quantized_model"), py::arg("batches"));
  m.def("compare", &ComparePy, py::arg("float_model"),
        py::arg("quantized_model"), py::arg("batches"));
  m.def(
      "compute_error",
      [](const py::handle &x, const py::handle &y) {
        return Unwrap(
            Sqnr(F32TensorFromArray(x, "x"), F32TensorFromArray(y, "y")));
      },
      py::arg("x"), py::arg("y"),
      "SQNR in dB: 20 log10(|x| / |x - y|) "
      "(torch.ao.ns.fx.utils.compute_sqnr).");
}

} // namespace octet::python
