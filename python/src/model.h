// octet.Model: a loaded or quantized graph with the registry that runs it,
// executors cached per input shapes, and run() callable from many Python
// threads at once (the GIL is released while kernels run).
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "io/octet_file.h"

namespace octet::python {

class Model {
public:
  // `is_octet`: a .octet or quantized graph (QuantizedGraphRegistry), else a
  // float graph (FloatOpRegistry).
  Model(Graph graph, bool is_octet, OctetMetadata metadata, std::string source,
        std::shared_ptr<Context> context);

  const Graph &graph() const { return graph_; }
  bool is_octet() const { return is_octet_; }
  const OctetMetadata &metadata() const { return metadata_; }
  const std::string &source() const { return source_; }
  const Context &context() const { return *context_; }
  std::shared_ptr<Context> shared_context() const { return context_; }
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // {input name: array} -> one tensor per graph input, in input order; fails
  // naming a missing or unknown input.
  std::vector<Tensor> InputsFromDict(const pybind11::dict &inputs) const;
  // One batch from a Python object: a {input name: array} dict, or an array (or
  // torch tensor) when the model has one input, or an (inputs, labels) pair as
  // a DataLoader over a TensorDataset yields. `index` names it in errors.
  std::vector<Tensor> BatchFromItem(const pybind11::handle &item,
                                    size_t index) const;
  // Runs without the GIL; `inputs` in graph input order. Compiles (once per
  // distinct input shapes) as needed.
  std::vector<Tensor> Run(const std::vector<Tensor> &inputs) const;
  // The executor for these input shapes (compiled and cached on first use).
  // Call without the GIL.
  std::shared_ptr<const Executor>
  ExecutorFor(const std::vector<Tensor> &inputs) const;
  // The executor compiled last (nullptr before the first run).
  std::shared_ptr<const Executor> last_executor() const;

private:
  Graph graph_;
  bool is_octet_;
  OctetMetadata metadata_;
  std::string source_;
  std::shared_ptr<Context> context_;
  mutable std::mutex mutex_;
  mutable std::map<std::vector<std::vector<int64_t>>,
                   std::shared_ptr<const Executor>>
      executors_;
  mutable std::shared_ptr<const Executor> last_;
};

// A Context for the Python API: `threads` worker threads (0 = all), ISAs capped
// by `isa` ("" = all detected, else an ISA name such as "avx2" or "scalar"; the
// OCTET_ISA environment variable applies too).
std::shared_ptr<Context> MakeContext(int threads, const std::string &isa);

void BindModel(pybind11::module_ &m);
void BindQuantize(pybind11::module_ &m);
void BindObservers(pybind11::module_ &m);
void BindNumericSuite(pybind11::module_ &m);
void BindTensorOps(pybind11::module_ &m);
void BindVectors(pybind11::module_ &m);
void BindSensitivity(pybind11::module_ &m);

} // namespace octet::python
