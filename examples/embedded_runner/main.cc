// embedded_runner MODEL.octet INPUT.npy...: loads a .octet model with octet's minimal runtime (octet::runtime),
// runs it on the inputs (one .npy per graph input, in graph input order) and prints each output's name, dtype,
// shape and first values. Exit status 0 on success, 1 on a failure (the message names the file and the cause),
// 2 on bad usage.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/context.h"
#include "io/npy.h"
#include "io/runtime/octet_runtime.h"

namespace {

constexpr int kShownValues = 8;

int Fail(const octet::Status& status) {
  fmt::print(stderr, "embedded_runner: {}\n", status.message());
  return 1;
}

// The first values of a tensor, whatever its dtype.
std::string FirstValues(const octet::Tensor& t) {
  const int64_t n = std::min<int64_t>(t.NumElements(), kShownValues);
  std::vector<std::string> values;
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case octet::DType::kF32: values.push_back(fmt::format("{:.6g}", t.data<float>()[i])); break;
      case octet::DType::kU8: values.push_back(fmt::format("{}", t.data<uint8_t>()[i])); break;
      case octet::DType::kS8: values.push_back(fmt::format("{}", t.data<int8_t>()[i])); break;
      case octet::DType::kS32: values.push_back(fmt::format("{}", t.data<int32_t>()[i])); break;
    }
  }
  std::string s;
  for (const std::string& v : values) s += (s.empty() ? "" : " ") + v;
  return t.NumElements() > n ? s + " ..." : s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: embedded_runner MODEL.octet INPUT.npy...\n");
    return 2;
  }
  const std::string model_path = argv[1];

  // The context picks the best kernels this CPU runs (OCTET_ISA caps them) and the worker threads.
  octet::Result<octet::Context> context = octet::Context::Create();
  if (!context.ok()) return Fail(context.status());

  // Read the model once to learn its input names; the shapes of the given tensors fix any dynamic dimensions.
  octet::Result<octet::OctetModel> model = octet::ReadOctetFile(model_path);
  if (!model.ok()) return Fail(model.status());
  const octet::Graph& graph = model->graph;
  if (static_cast<size_t>(argc - 2) != graph.inputs().size()) {
    fmt::print(stderr, "embedded_runner: '{}' has {} inputs, {} .npy files given\n", model_path,
               graph.inputs().size(), argc - 2);
    return 2;
  }
  std::vector<std::pair<std::string, octet::Tensor>> inputs;
  octet::CompileOptions options;
  for (size_t k = 0; k < graph.inputs().size(); ++k) {
    const std::string& name = graph.value(graph.inputs()[k]).name;
    octet::Result<octet::Tensor> t = octet::ReadNpy(argv[2 + k]);
    if (!t.ok()) return Fail(t.status());
    fmt::print("input  {}: {} {} from {}\n", name, t->dtype(), t->shape(), argv[2 + k]);
    options.input_shapes.emplace_back(name, t->shape());
    inputs.emplace_back(name, std::move(*t));
  }

  octet::Result<octet::OctetRuntime> runtime =
      octet::OctetRuntime::Compile(std::move(*model), model_path, *context, options);
  if (!runtime.ok()) return Fail(runtime.status());
  octet::Result<std::vector<octet::Tensor>> outputs = runtime->Run(inputs);
  if (!outputs.ok()) return Fail(outputs.status());

  const octet::Graph& compiled = runtime->graph();
  for (size_t k = 0; k < outputs->size(); ++k) {
    const octet::Tensor& y = (*outputs)[k];
    fmt::print("output {}: {} {}: {}\n", compiled.value(compiled.outputs()[k]).name, y.dtype(), y.shape(),
               FirstValues(y));
  }
  return 0;
}
