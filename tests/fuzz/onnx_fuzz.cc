// libFuzzer target for the ONNX importer: ImportOnnxModel must never crash or hang, every error must name the model
// (import errors) or a node (compile and run errors), and any graph it accepts must pass VerifyGraph, compile under
// small size limits, and run on zero inputs without touching memory it does not own.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "core/executor.h"
#include "core/verifier.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "onnx_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const octet::OpRegistry registry = octet::FloatOpRegistry();
  static const octet::Context context = octet::Context::ForIsas(octet::IsaSet::Of({octet::Isa::kScalar}));
  octet::OnnxImportOptions import_options;
  import_options.registry = &registry;  // no model_dir: external data is refused
  auto graph = octet::ImportOnnxModel(std::as_bytes(std::span<const uint8_t>(data, size)), "fuzz.onnx",
                                      import_options);
  if (!graph.ok()) {
    if (graph.status().message().find("'fuzz.onnx'") == std::string::npos) {
      Fail("an import error does not name the model", graph.status().ToString());
    }
    return 0;
  }
  const octet::Status verified = octet::VerifyGraph(*graph);
  if (!verified.ok()) Fail("an imported graph fails VerifyGraph", verified.ToString());

  // Unknown dims become 1; the limits keep each input case to a few million operations.
  octet::CompileOptions options;
  options.max_tensor_elements = 1 << 12;
  options.max_arena_bytes = 1 << 22;
  for (octet::ValueId id : graph->inputs()) {
    std::vector<int64_t> dims = graph->value(id).shape->dims();
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    options.input_shapes.emplace_back(graph->value(id).name, octet::Shape(dims));
  }
  auto exec = octet::Executor::Compile(*graph, context, registry, options);
  if (!exec.ok()) return 0;
  std::vector<octet::Tensor> inputs;
  for (octet::ValueId id : graph->inputs()) {
    auto t = octet::Tensor::Create(exec->value_dtype(id), exec->value_shape(id));
    if (!t.ok()) return 0;
    inputs.push_back(std::move(*t));
  }
  auto outputs = exec->Run(inputs);
  if (!outputs.ok() && outputs.status().message().find("node '") == std::string::npos) {
    Fail("a run error does not name the node", outputs.status().ToString());
  }
  return 0;
}
