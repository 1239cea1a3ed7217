// Convert's activation fusion (quant/fuse_int8_activation.h) on real models: the committed convs model (a ReLU6
// after a dilated convolution) and MobileNetV2 (35 ReLU6, when tests/onnx/large_models.h finds it): every QClamp
// fed by an int8 operator alone folds into it, and the fused graph's output equals the unfused one bit for bit on
// every ISA this machine runs, at 1 and 2 threads. The fused graph still exports to QDQ ONNX (Clip after the
// convolution). (In the seeded MobileNetV2 most BatchNorms share their default parameters through Identity nodes
// and stay float, so only the ReLU6 after a folded BatchNorm follow a QConv.)
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/op_table.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "io/onnx/qdq_export.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/onnx/large_models.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

int CountOp(const Graph& g, Int8Op op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += IsInt8Op(node, op);
  return n;
}

// QClamps whose input comes from an operator with a fused activation and goes nowhere else: what the pass folds.
int FoldableClamps(const Graph& g) {
  const std::vector<int> producers = g.Producers();
  std::vector<int> uses(static_cast<size_t>(g.num_values()), 0);
  for (const Node& n : g.nodes()) {
    for (ValueId v : n.inputs) {
      if (v != kNoValue) ++uses[static_cast<size_t>(v)];
    }
  }
  int n = 0;
  for (const Node& clamp : g.nodes()) {
    if (!IsInt8Op(clamp, Int8Op::kQClamp) || uses[static_cast<size_t>(clamp.inputs[0])] != 1) continue;
    const int p = producers[static_cast<size_t>(clamp.inputs[0])];
    if (p < 0) continue;
    for (Int8Op op : {Int8Op::kQConv, Int8Op::kQGemm, Int8Op::kQMatMul, Int8Op::kQAdd, Int8Op::kQMul}) {
      n += IsInt8Op(g.node(p), op);
    }
  }
  return n;
}

Tensor RunOn(const Graph& g, const Context& context, const Tensor& x) {
  return testing::RunFirstOutput(g, context, QuantizedGraphRegistry(), x);
}

// Calibrates `path` on `input` and two seeded N(0, 1) batches of its shape (MinMax activations, x86 preset
// otherwise), converts it with and without fusion and compares; returns how many QClamps folded.
int CheckFusedModel(const std::string& path, const Tensor& input) {
  Graph graph = ReadOnnxModel(path).value();
  QConfig q = GetDefaultQConfig("x86").value();
  q.activation = ObserverSpec{ObserverKind::kMinMax, {}};
  QConfigMapping mapping;
  mapping.SetGlobal(q);
  auto prepared = Prepare(graph, mapping);
  INFO(prepared.status().message());
  REQUIRE(prepared.ok());
  std::vector<std::vector<Tensor>> batches = {{input}};
  for (std::vector<Tensor>& b : testing::NormalBatches(input.shape(), 2, 11)) batches.push_back(std::move(b));
  testing::CalibrateQuietly(*prepared, batches, Context::ForIsas(DetectedIsas(), 2));
  ConvertOptions options;
  options.fuse_activations = false;
  auto unfused = Convert(*prepared, options);
  INFO(unfused.status().message());
  REQUIRE(unfused.ok());
  auto fused = Convert(*prepared);
  INFO(fused.status().message());
  REQUIRE(fused.ok());
  const int folded = FoldableClamps(*unfused);
  CHECK(folded > 0);
  CHECK(FoldableClamps(*fused) == 0);
  CHECK(CountOp(*fused, Int8Op::kQClamp) == CountOp(*unfused, Int8Op::kQClamp) - folded);
  CHECK(fused->num_nodes() == unfused->num_nodes() - folded);

  const Tensor expect = RunOn(*unfused, testing::ContextFor(Isa::kScalar, 1), input);
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, "fused int8 activations on models")) continue;
    for (int threads : {1, 2}) {
      INFO("isa " << IsaName(isa) << ", " << threads << " threads");
      const Tensor y = RunOn(*fused, testing::ContextFor(isa, threads), input);
      REQUIRE(y.NumElements() == expect.NumElements());
      for (int64_t i = 0; i < y.NumElements(); ++i) {
        INFO("element " << i);
        REQUIRE(y.data<float>()[i] == expect.data<float>()[i]);
      }
    }
  }
  auto qdq = ExportQdqModel(*fused);
  INFO(qdq.status().message());
  CHECK(qdq.ok());
  return folded;
}

TEST_CASE("The committed convs model's ReLU6 folds into its convolution, outputs unchanged", "[onnx]") {
  const std::string dir = std::string(OCTET_TEST_DATA_DIR) + "/models/";
  CHECK(CheckFusedModel(dir + "convs.onnx", ReadNpy(dir + "convs.input0.npy").value()) == 1);
}

TEST_CASE("MobileNetV2's ReLU6 fold into the convolutions, outputs unchanged", "[onnx]") {
  const std::filesystem::path dir = testing::LargeModelDir();
  if (!testing::HaveLargeModels(dir)) {
    testing::Skip("MobileNetV2 activation fusion: no large models in " + dir.string());
    return;
  }
  const std::string base = (dir / "mobilenet_v2").string();
  CHECK(CheckFusedModel(base + ".onnx", ReadNpy(base + ".input0.npy").value()) > 0);
}

}  // namespace
}  // namespace octet
