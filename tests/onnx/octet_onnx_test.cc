// ONNX models (tests/data/models) saved as .octet, loaded back and run: the loaded graph equals the imported one
// field by field and gives bit-identical outputs. Here rather than in tests/io because ONNX import is optional.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/executor.h"
#include "io/npy.h"
#include "io/octet_file.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "quant/quantized_registry.h"
#include "tests/io/octet_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;

std::vector<Tensor> RunWith(const Graph& graph, const OpRegistry& registry, const std::vector<Tensor>& inputs) {
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  CompileOptions options;
  for (size_t k = 0; k < inputs.size(); ++k) {
    options.input_shapes.emplace_back(graph.value(graph.inputs()[k]).name, inputs[k].shape());
  }
  Result<Executor> exec = Executor::Compile(graph, context, registry, options);
  INFO(exec.status().ToString());
  REQUIRE(exec.ok());
  Result<std::vector<Tensor>> out = exec->Run(inputs);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return std::move(out).value();
}

TEST_CASE("ONNX models saved as .octet load back equal and run bit-identically", "[onnx]") {
  const auto name = GENERATE(as<std::string>{}, "convs", "digits_cnn", "digits_mlp", "gru_bidir", "lstm_lm",
                             "transformer", "transformer13");
  INFO("model " << name);
  const Graph imported = ReadOnnxModel(kModels + name + ".onnx").value();
  std::vector<Tensor> inputs;
  for (int k = 0; std::filesystem::exists(kModels + name + ".input" + std::to_string(k) + ".npy"); ++k) {
    inputs.push_back(ReadNpy(kModels + name + ".input" + std::to_string(k) + ".npy").value());
  }
  REQUIRE(!inputs.empty());

  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("octet_onnx_test_{}_{}.octet", ::getpid(), name)).string();
  REQUIRE(WriteOctetFile(path, imported, {{"producer", "octet_onnx_test"}, {"source", name + ".onnx"}}).ok());
  const Result<OctetModel> loaded = ReadOctetFile(path);
  std::filesystem::remove(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->metadata.at("source") == name + ".onnx");
  testing::ExpectSameGraph(imported, loaded->graph);

  const std::vector<Tensor> want = RunWith(imported, FloatOpRegistry(), inputs);
  const std::vector<Tensor> got = RunWith(loaded->graph, QuantizedGraphRegistry(), inputs);
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < want.size(); ++k) testing::ExpectSameTensor(got[k], want[k], fmt::format("output {}", k));
}

}  // namespace
}  // namespace octet
