// Weights as converters emit them (tests/data/models/make_shared_weights.py): BatchNorm parameters shared through
// Identity nodes, an Identity of an Identity, a Conv weight in a Constant node. They import as constants, so the
// model runs with only its compute nodes and FoldBatchNorm folds both BatchNorms (torch 1.13's ResNet-18 export).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "quant/fold_batch_norm.h"
#include "tests/test_util.h"

namespace octet {
namespace {

const std::string kSharedWeightsDir = std::string(OCTET_TEST_DATA_DIR) + "/models/shared_weights/";

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.shape().NumElements(); ++i) {
    m = std::max(m, static_cast<double>(std::fabs(a.data<float>()[i] - b.data<float>()[i])));
  }
  return m;
}

Tensor RunOnce(const Graph& g, const Tensor& x) {
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  return testing::RunFirstOutput(g, context, FloatOpRegistry(), x);
}

TEST_CASE("Weights through Identity and Constant nodes are constants: both BatchNorms fold", "[onnx]") {
  auto g = ReadOnnxModel(kSharedWeightsDir + "bn_identity.onnx");
  INFO(g.status().message());
  REQUIRE(g.ok());
  std::vector<std::string> ops;
  for (const Node& n : g->nodes()) ops.push_back(n.op_type);
  CHECK(ops == std::vector<std::string>{"Conv", "BatchNormalization", "Relu", "Conv", "BatchNormalization"});
  const ValueId shared = g->FindValue("bn2.bias");  // Identity(Identity(bn1.bias))
  REQUIRE(shared != kNoValue);
  CHECK(g->value(shared).kind == ValueKind::kConstant);
  CHECK(g->value(g->FindValue("conv2.weight")).kind == ValueKind::kConstant);

  const Tensor x = ReadNpy(kSharedWeightsDir + "bn_identity.input0.npy").value();
  const Tensor want = ReadNpy(kSharedWeightsDir + "bn_identity.output0.npy").value();
  CHECK(MaxAbsDiff(RunOnce(*g, x), want) < 1e-4);

  Graph folded = *g;
  auto names = FoldBatchNorm(folded);
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"bn1", "bn2"});
  CHECK(folded.num_nodes() == 3);
  CHECK(MaxAbsDiff(RunOnce(folded, x), want) < 1e-4);
  // The copy shares constant data with the original, which folding must leave as it was.
  CHECK(MaxAbsDiff(RunOnce(*g, x), want) < 1e-4);
}

// A torch 1.13 export (tests/data/models/corpus/make_corpus.py, training=PRESERVE from eval mode) whose fresh
// BatchNorms' equal parameters torch merged into one initializer read through Identity nodes: every BatchNorm
// folds, and the folded model still gives ONNX Runtime's output (committed beside it).
TEST_CASE("A torch export with BatchNorm parameters shared through Identity folds every BatchNorm", "[onnx]") {
  const std::string dir = std::string(OCTET_TEST_DATA_DIR) + "/models/corpus/";
  auto g = ReadOnnxModel(dir + "resnet_shared_bn_op13.onnx");
  INFO(g.status().message());
  REQUIRE(g.ok());
  int batch_norms = 0;
  for (const Node& n : g->nodes()) batch_norms += n.op_type == "BatchNormalization";
  CHECK(batch_norms == 5);
  const Tensor x = ReadNpy(dir + "resnet_shared_bn_op13.input0.npy").value();
  const Tensor want = ReadNpy(dir + "resnet_shared_bn_op13.ort0.npy").value();
  Graph folded = *g;
  auto names = FoldBatchNorm(folded);
  REQUIRE(names.ok());
  CHECK(static_cast<int>(names->size()) == batch_norms);
  for (const Node& n : folded.nodes()) CHECK(n.op_type != "BatchNormalization");
  CHECK(MaxAbsDiff(RunOnce(folded, x), want) < 1e-4);
}

}  // namespace
}  // namespace octet
