// Python bindings of the per-layer test vectors (io/vectors/vectors.h,
// docs/test_vectors.md).
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/vectors/vectors.h"
#include "python/src/array_bridge.h"
#include "python/src/errors.h"
#include "python/src/model.h"

namespace octet::python {

namespace py = pybind11;

void BindVectors(py::module_ &m) {
  m.def(
      "write_vectors",
      [](const Model &model, const py::dict &inputs, const std::string &dir,
         const std::optional<std::vector<std::string>> &nodes, bool force) {
        if (!model.is_octet()) {
          throw StatusError(InvalidArgument(
              "write_vectors needs a quantized model; '{}' is float",
              model.source()));
        }
        std::vector<Tensor> tensors = model.InputsFromDict(inputs);
        std::vector<std::pair<std::string, Tensor>> named;
        const std::vector<std::string> names = model.input_names();
        for (size_t k = 0; k < tensors.size(); ++k)
          named.emplace_back(names[k], std::move(tensors[k]));
        VectorsOptions options;
        if (nodes)
          options.nodes = *nodes;
        options.force = force;
        options.model_name = model.source();
        VectorsSummary summary;
        {
          py::gil_scoped_release release;
          summary = Unwrap(WriteVectors(model.graph(), named, dir,
                                        model.context(), options));
        }
        py::dict result;
        result["nodes"] = summary.nodes;
        result["not_replayed"] = summary.not_replayed;
        result["files"] = summary.files;
        return result;
      },
      py::arg("model"), py::arg("inputs"), py::arg("dir"),
      py::arg("nodes") = py::none(), py::arg("force") = false,
      "Runs a quantized model once and writes per-node integer test vectors "
      "with a manifest.json into `dir` "
      "(docs/test_vectors.md).");
  m.def(
      "replay_vectors",
      [](const std::string &dir) {
        ReplayReport report;
        {
          py::gil_scoped_release release;
          report = Unwrap(ReplayVectors(dir));
        }
        py::dict result;
        result["replayed"] = report.replayed;
        result["skipped"] = report.skipped;
        result["elements"] = report.elements;
        return result;
      },
      py::arg("dir"),
      "Recomputes every node of a vectors folder with octet's scalar reference "
      "kernels (==).");
}

} // namespace octet::python
