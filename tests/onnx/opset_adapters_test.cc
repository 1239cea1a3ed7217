// Models in the older and newer forms of ONNX operators
// (tests/data/models/make_opsets.py) import through the opset adapters and
// match outputs computed from each op's definition at the model's opset; what
// is not adapted is refused naming the node, op, opset and difference.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/executor.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "tests/test_util.h"

namespace octet {
namespace {

const std::string kDir = std::string(OCTET_TEST_DATA_DIR) + "/models/opsets/";

TEST_CASE("Models at opsets 6-12 and 18-21 (IR up to 10) run as their opset defines", "[onnx]") {
  static const OpRegistry registry = FloatOpRegistry();
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  int checked = 0;
  for (const auto &entry : std::filesystem::directory_iterator(kDir)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".onnx" || file.rfind("refused_", 0) == 0) continue;
    const std::string name = entry.path().stem().string();
    INFO("model " << name);
    auto graph = ReadOnnxModel(kDir + file);
    INFO(graph.status().ToString());
    REQUIRE(graph.ok());
    const std::vector<Tensor> inputs = testing::ReadNumberedNpy(kDir + name, "input");
    const std::vector<Tensor> expected = testing::ReadNumberedNpy(kDir + name, "output");
    REQUIRE(inputs.size() == graph->inputs().size());
    REQUIRE(expected.size() == graph->outputs().size());
    const std::vector<Tensor> outputs = testing::RunWithInputShapes(*graph, context, registry, inputs);
    for (size_t k = 0; k < expected.size(); ++k) {
      INFO("output " << k);
      REQUIRE(outputs[k].shape() == expected[k].shape());
      for (int64_t i = 0; i < expected[k].NumElements(); ++i) {
        const float got = outputs[k].data<float>()[i], want = expected[k].data<float>()[i];
        INFO("element " << i << ": " << got << " vs " << want);
        CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
      }
    }
    ++checked;
  }
  CHECK(checked == 23);  // every generated model ran
}

TEST_CASE(
    "What the opset adapters do not adapt is refused naming node, op, "
    "opset and difference",
    "[onnx]") {
  struct Case {
    const char *file;
    StatusCode code;
    const char *message;
  };
  const Case cases[] = {
      {"refused_batchnorm_spatial0_o7.onnx", StatusCode::kUnimplemented,
       "node 'BatchNormalization_0' (BatchNormalization) at opset 7: spatial=0 "
       "(statistics per activation rather than "
       "per channel, opsets 7-8) is not supported"},
      {"refused_add_broadcast_o6.onnx", StatusCode::kUnimplemented,
       "node 'add' (Add) at opset 6: Add-6 is an older form than Add-7, the "
       "one octet reads from opset 7 on; convert "
       "the model to opset 7 or later"},
      {"refused_reducemean_runtime_axes_o18.onnx", StatusCode::kUnimplemented,
       "node 'mean' (ReduceMean) at opset 18: input 1 (axes) 'ax' is computed "
       "at run time; octet needs it constant "
       "(an initializer or a Constant node)"},
      {"refused_opset22.onnx", StatusCode::kUnimplemented,
       "opset 22 is not supported (octet reads opsets 7 to 21, and older ones "
       "for the ops opset 7 kept"},
      {"refused_ir11.onnx", StatusCode::kUnimplemented, "IR version 11 is not supported (3 to 10)"},
  };
  size_t refused_files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(kDir)) {
    refused_files += entry.path().extension() == ".onnx" && entry.path().filename().string().rfind("refused_", 0) == 0;
  }
  CHECK(refused_files == std::size(cases));
  for (const Case &c : cases) {
    INFO(c.file);
    auto graph = ReadOnnxModel(kDir + c.file);
    REQUIRE(!graph.ok());
    INFO(graph.status().ToString());
    CHECK(graph.status().code() == c.code);
    CHECK(graph.status().message().find(c.message) != std::string::npos);
  }
}

}  // namespace
}  // namespace octet
