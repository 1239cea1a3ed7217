// Python bindings of models: octet.load / octet.Model (run, save, save_onnx,
// kernels) and octet.kernel_info().
#include <pybind11/stl.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/isa.h"
#include "core/version.h"
#include "io/file_util.h"
#include "python/src/array_bridge.h"
#include "python/src/errors.h"
#include "python/src/model.h"
#if OCTET_WITH_ONNX
#include "io/onnx/onnx_importer.h"
#include "io/onnx/qdq_export.h"
#endif

namespace octet::python {

namespace py = pybind11;

namespace {

std::shared_ptr<Model> Load(const std::string &path, int threads,
                            const std::string &isa) {
  std::shared_ptr<Context> context = MakeContext(threads, isa);
  py::gil_scoped_release release;
  if (IsOctetFile(path) ||
      std::filesystem::path(path).extension() == ".octet") {
    OctetModel octet = Unwrap(ReadOctetFile(path));
    return std::make_shared<Model>(std::move(octet.graph), true,
                                   std::move(octet.metadata), path, context);
  }
#if OCTET_WITH_ONNX
  return std::make_shared<Model>(Unwrap(ReadOnnxModel(path)), false,
                                 OctetMetadata{}, path, context);
#else
  throw StatusError(Unimplemented(
      "failed to load '{}': this build of octet has no ONNX import", path));
#endif
}

py::dict RunModel(const Model &model, const py::dict &inputs) {
  std::vector<Tensor> tensors = model.InputsFromDict(inputs);
  std::vector<Tensor> outputs;
  {
    py::gil_scoped_release release;
    outputs = model.Run(tensors);
  }
  py::dict result;
  const std::vector<std::string> names = model.output_names();
  for (size_t k = 0; k < outputs.size(); ++k)
    result[py::str(names[k])] = ArrayFromTensor(outputs[k]);
  return result;
}

void Save(const Model &model, const std::string &path) {
  py::gil_scoped_release release;
  ThrowIfError(WriteOctetFile(path, model.graph(), model.metadata()));
}

void SaveOnnx([[maybe_unused]] const Model &model,
              [[maybe_unused]] const std::string &path) {
#if OCTET_WITH_ONNX
  py::gil_scoped_release release;
  Result<std::string> bytes = ExportQdqModel(model.graph());
  if (!bytes.ok())
    throw StatusError(
        bytes.status().WithContext(fmt::format("failed to write '{}'", path)));
  ThrowIfError(WriteFileAtomically(path, *bytes));
#else
  throw StatusError(Unimplemented(
      "failed to write '{}': this build of octet has no ONNX export", path));
#endif
}

// {node name: kernel} of the executor that ran last (each node's chosen kernel,
// "" for folded nodes).
py::dict Kernels(const Model &model) {
  std::shared_ptr<const Executor> exec = model.last_executor();
  if (!exec) {
    throw StatusError(
        FailedPrecondition("'{}' has not run yet: kernels are chosen when "
                           "run() first sees an input "
                           "shape",
                           model.source()));
  }
  py::dict result;
  const Graph &g = exec->graph();
  for (int k = 0; k < g.num_nodes(); ++k) {
    result[py::str(g.nodes()[static_cast<size_t>(k)].name)] =
        exec->is_folded(k) ? std::string() : exec->kernel_name(k);
  }
  return result;
}

py::dict KernelInfo() {
  py::dict info;
  info["version"] = Version();
  info["git"] = GitHash();
  info["compiler"] = CompilerName();
  info["threading"] = ThreadingBackendName();
  info["hardware_threads"] = HardwareConcurrency();
  info["isas_compiled"] = CompiledIsas().ToString();
  info["isas_detected"] = DetectedIsas().ToString();
  info["cpu_features"] = GetCpuFeatures().ToString();
  Result<Context> context = Context::Create();
  info["isas_enabled"] =
      context.ok() ? context->enabled_isas().ToString() : std::string();
  const char *env = std::getenv("OCTET_ISA");
  info["octet_isa"] = env != nullptr ? env : "";
  return info;
}

} // namespace

void BindModel(py::module_ &m) {
  py::class_<Model, std::shared_ptr<Model>>(
      m, "Model", "A float (ONNX) or int8 (.octet) model.")
      .def("run", &RunModel, py::arg("inputs"),
           "Runs the model: {input name: array} -> {output name: array}. "
           "Thread-safe; the GIL is released while "
           "kernels run.")
      .def("save", &Save, py::arg("path"),
           "Writes the model as a .octet file (atomically).")
      .def("save_onnx", &SaveOnnx, py::arg("path"),
           "Writes a quantized model as ONNX QDQ (opset 13).")
      .def("kernels", &Kernels, "{node name: kernel} chosen by the last run.")
      .def_property_readonly("inputs", &Model::input_names)
      .def_property_readonly("outputs", &Model::output_names)
      .def_property_readonly("is_quantized", &Model::is_octet)
      .def_property_readonly("metadata", &Model::metadata)
      .def_property_readonly("source", &Model::source)
      .def_property_readonly(
          "nodes",
          [](const Model &model) {
            std::vector<std::pair<std::string, std::string>> nodes;
            for (const Node &n : model.graph().nodes()) {
              nodes.emplace_back(n.name, n.op_type);
            }
            return nodes;
          },
          "[(node name, op type)] in graph order.")
      .def("__repr__", [](const Model &model) {
        return fmt::format("<octet.Model '{}': {} nodes, {}>", model.source(),
                           model.graph().num_nodes(),
                           model.is_octet() ? "int8" : "float");
      });
  m.def("load", &Load, py::arg("path"), py::arg("threads") = 1,
        py::arg("isa") = "",
        "Loads an ONNX or .octet model. threads: worker threads (0 = all); "
        "isa: cap on the ISAs used ('avx2', "
        "'scalar', ...).");
  m.def("kernel_info", &KernelInfo,
        "The build and the CPU: version, compiler, ISAs compiled, detected, "
        "enabled.");
}

} // namespace octet::python
