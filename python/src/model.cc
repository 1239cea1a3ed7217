// octet.Model: input conversion, the executor cache and running (see model.h).
#include "python/src/model.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/float/float_fusion.h"
#include "ops/float/registry.h"
#include "ops/int8/nhwc_layout.h"
#include "python/src/array_bridge.h"
#include "python/src/errors.h"
#include "quant/quantized_registry.h"

namespace octet::python {

namespace py = pybind11;

Model::Model(Graph graph, bool is_octet, OctetMetadata metadata,
             std::string source, std::shared_ptr<Context> context)
    : graph_(std::move(graph)), is_octet_(is_octet),
      metadata_(std::move(metadata)), source_(std::move(source)),
      context_(std::move(context)) {}

std::vector<std::string> Model::input_names() const {
  std::vector<std::string> names;
  for (ValueId id : graph_.inputs())
    names.push_back(graph_.value(id).name);
  return names;
}

std::vector<std::string> Model::output_names() const {
  std::vector<std::string> names;
  for (ValueId id : graph_.outputs())
    names.push_back(graph_.value(id).name);
  return names;
}

std::vector<Tensor> Model::InputsFromDict(const py::dict &inputs) const {
  const std::vector<std::string> names = input_names();
  for (const auto &[key, value] : inputs) {
    const std::string name = py::str(key).cast<std::string>();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw StatusError(InvalidArgument(
          "failed to run '{}': it has no input named '{}' (its inputs: {})",
          source_, name, fmt::join(names, ", ")));
    }
  }
  std::vector<Tensor> tensors;
  for (const std::string &name : names) {
    if (!inputs.contains(name)) {
      throw StatusError(InvalidArgument(
          "failed to run '{}': input '{}' is not given (its inputs: {})",
          source_, name, fmt::join(names, ", ")));
    }
    tensors.push_back(TensorFromArray(inputs[py::str(name)], name));
  }
  return tensors;
}

// One calibration batch from what the iterable yielded: a {input name: array}
// dict, or an array (or a torch tensor) when the model has one input, or a
// (inputs, labels) pair as a DataLoader of a TensorDataset yields.
std::vector<Tensor> Model::BatchFromItem(const py::handle &item,
                                         size_t index) const {
  const std::vector<std::string> names = input_names();
  py::object inputs = py::reinterpret_borrow<py::object>(item);
  if ((py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item)) &&
      py::len(item) >= 1 && names.size() == 1) {
    inputs = py::reinterpret_borrow<py::object>(
        item)[py::int_(0)]; // (x, y) pairs: the labels are not needed
  }
  try {
    if (py::isinstance<py::dict>(inputs))
      return InputsFromDict(inputs.cast<py::dict>());
    if (names.size() != 1) {
      throw StatusError(InvalidArgument(
          "'{}' has {} inputs: each batch must be a dict {{input name: "
          "array}}",
          source_, names.size()));
    }
    py::dict d;
    d[py::str(names[0])] = inputs;
    return InputsFromDict(d);
  } catch (const StatusError &e) {
    throw StatusError(e.status().WithContext(fmt::format("batch {}", index)));
  }
}

std::shared_ptr<const Executor>
Model::ExecutorFor(const std::vector<Tensor> &inputs) const {
  std::vector<std::vector<int64_t>> key;
  for (const Tensor &t : inputs)
    key.push_back(t.shape().dims());
  // Compiling under the lock keeps one executor per shape set; concurrent runs
  // of a compiled one do not wait.
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = executors_.find(key);
  if (it != executors_.end()) {
    last_ = it->second;
    return it->second;
  }
  CompileOptions options;
  const std::vector<std::string> names = input_names();
  for (size_t k = 0; k < inputs.size(); ++k)
    options.input_shapes.emplace_back(names[k], inputs[k].shape());
  const OpRegistry registry =
      is_octet_ ? QuantizedGraphRegistry() : FloatOpRegistry();
  // .octet graphs run with int8 activations kept NHWC between the int8 ops
  // that read them (ops/int8/nhwc_layout.h), and float Relu/Clip fold into the
  // Conv/Gemm before them (ops/float/float_fusion.h); outputs are unchanged.
  Result<Executor> exec = Executor::Compile(
      float_ops::FuseFloatActivations(
          is_octet_ ? int8_ops::PlanNhwcLayout(graph_) : graph_),
      *context_, registry, options);
  if (!exec.ok())
    throw StatusError(
        exec.status().WithContext(fmt::format("failed to run '{}'", source_)));
  auto shared = std::make_shared<const Executor>(std::move(*exec));
  executors_.emplace(std::move(key), shared);
  last_ = shared;
  return shared;
}

std::shared_ptr<const Executor> Model::last_executor() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_;
}

std::vector<Tensor> Model::Run(const std::vector<Tensor> &inputs) const {
  std::shared_ptr<const Executor> exec = ExecutorFor(inputs);
  Result<std::vector<Tensor>> outputs = exec->Run(inputs);
  if (!outputs.ok())
    throw StatusError(outputs.status().WithContext(
        fmt::format("failed to run '{}'", source_)));
  return std::move(*outputs);
}

std::shared_ptr<Context> MakeContext(int threads, const std::string &isa) {
  ContextOptions options;
  options.threads = threads;
  if (!isa.empty())
    options.isa_cap = Unwrap(IsaSet::ParseCap(isa));
  return std::make_shared<Context>(Unwrap(Context::Create(options)));
}

} // namespace octet::python
