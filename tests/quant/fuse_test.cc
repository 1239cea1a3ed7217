// BatchNorm folding and activation fusion: the rewritten graph computes what the original did (float outputs within
// a tight tolerance), the folded weights follow PyTorch's formula, and pairs that cannot be rewritten are left alone.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "core/builder.h"
#include "core/verifier.h"
#include "ops/float/registry.h"
#include "quant/fold_batch_norm.h"
#include "quant/fuse.h"
#include "quant/fused_ops.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::RandomTensor;

// max |a - b| / max(1, max |b|): the folded weights round differently from BatchNorm's two steps, so outputs agree
// to a few float32 ulps of the output magnitude, not bit for bit.
double RelativeError(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double err = 0, mag = 1;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    err = std::max(err, std::fabs(double(a.data<float>()[i]) - b.data<float>()[i]));
    mag = std::max(mag, std::fabs(double(b.data<float>()[i])));
  }
  return err / mag;
}

std::vector<Tensor> RunFusedGraph(const Graph& g, const OpRegistry& r, const std::vector<Tensor>& inputs) {
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  CompileOptions co;
  for (size_t k = 0; k < inputs.size(); ++k) co.input_shapes.emplace_back(g.value(g.inputs()[k]).name, inputs[k].shape());
  auto exec = Executor::Compile(g, context, r, co);
  REQUIRE(exec.ok());
  auto y = exec->Run(inputs);
  REQUIRE(y.ok());
  return std::move(*y);
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

TEST_CASE("Fuse folds Conv+BN(+ReLU) and fuses Linear+ReLU; outputs match the unfused graph", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("fuse_small_cnn");
  const Graph original = testing::SmallCnn(rng());
  Graph fused = original;
  auto report = Fuse(fused);
  REQUIRE(report.ok());
  CHECK(report->folded_batch_norms == std::vector<std::string>{"bn1"});
  CHECK(report->fused_activations == std::vector<std::string>{"relu1", "relu2"});
  CHECK(CountOp(fused, "BatchNormalization") == 0);
  CHECK(CountOp(fused, "Relu") == 0);
  const Node& conv = fused.node(fused.FindNode("conv1"));
  CHECK(IsFusedNode(conv));
  CHECK(FusedActivation(conv) == "Relu");
  CHECK(fused.value(conv.outputs[0]).name == "relu1");  // the fused node produces the Relu's value
  CHECK(FusedActivation(fused.node(fused.FindNode("fc1"))) == "Relu");
  CHECK_FALSE(IsFusedNode(fused.node(fused.FindNode("fc2"))));

  const Tensor x = RandomTensor(rng, Shape{4, 3, 8, 8}, -1.0f, 1.0f);
  const Tensor y0 = RunFusedGraph(original, FloatOpRegistry(), {x})[0];
  const Tensor y1 = RunFusedGraph(fused, QuantFloatRegistry(), {x})[0];
  CHECK(RelativeError(y1, y0) < 1e-5);
  // The fused graph is not runnable without the fused operators: an error, never a silently dropped ReLU.
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  CompileOptions co;
  co.input_shapes = {{"x", Shape{4, 3, 8, 8}}};
  auto plain = Executor::Compile(fused, context, FloatOpRegistry(), co);
  REQUIRE_FALSE(plain.ok());
  CHECK_THAT(plain.status().message(), Catch::Contains("conv1"));
}

TEST_CASE("FoldBatchNorm follows PyTorch's fuse_conv_bn_weights and fuse_linear_bn_weights", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("fold_formula");
  GraphBuilder b("fold", rng());
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 2, 5, 5});
  Conv2dOptions c;
  c.in_channels = 2;
  c.out_channels = 3;
  c.bias = false;  // folding adds the bias
  x = b.Conv2d("conv", x, c);
  x = b.BatchNorm2d("bn", x, 3, 1e-3f);
  x = b.Flatten("flat", x);
  x = b.Linear("fc", x, 27, 4);
  x = b.BatchNorm2d("bn_fc", x, 4);  // BatchNorm1d on [N, C]
  b.Output(x);
  Graph g = std::move(b).Build().value();
  testing::RandomizeBatchNorms(g, rng);
  const Graph original = g;
  auto folded = FoldBatchNorm(g);
  REQUIRE(folded.ok());
  CHECK(*folded == std::vector<std::string>{"bn", "bn_fc"});

  auto data = [&](const Graph& gr, const std::string& name) { return gr.value(gr.FindValue(name)).data; };
  const Tensor w0 = data(original, "conv.weight"), w1 = data(g, "conv.weight"), b1 = data(g, "conv.bias");
  const Tensor gamma = data(original, "bn.weight"), beta = data(original, "bn.bias");
  const Tensor mean = data(original, "bn.running_mean"), var = data(original, "bn.running_var");
  for (int64_t o = 0; o < 3; ++o) {
    const float r = 1.0f / std::sqrt(var.data<float>()[o] + 1e-3f);
    for (int64_t k = 0; k < 18; ++k) {
      CHECK(w1.data<float>()[o * 18 + k] == w0.data<float>()[o * 18 + k] * (gamma.data<float>()[o] * r));
    }
    CHECK(b1.data<float>()[o] == (0.0f - mean.data<float>()[o]) * r * gamma.data<float>()[o] + beta.data<float>()[o]);
  }
  const Tensor fw0 = data(original, "fc.weight"), fw1 = data(g, "fc.weight");
  const Tensor fb0 = data(original, "fc.bias"), fb1 = data(g, "fc.bias");
  const Tensor fg = data(original, "bn_fc.weight"), fbeta = data(original, "bn_fc.bias");
  const Tensor fm = data(original, "bn_fc.running_mean"), fv = data(original, "bn_fc.running_var");
  for (int64_t o = 0; o < 4; ++o) {
    const float s = fg.data<float>()[o] * (1.0f / std::sqrt(fv.data<float>()[o] + 1e-5f));
    CHECK(fw1.data<float>()[o * 27 + 5] == fw0.data<float>()[o * 27 + 5] * s);
    CHECK(fb1.data<float>()[o] == (fb0.data<float>()[o] - fm.data<float>()[o]) * s + fbeta.data<float>()[o]);
  }
  const std::vector<Tensor> in = {RandomTensor(rng, Shape{3, 2, 5, 5}, -2.0f, 2.0f)};
  CHECK(RelativeError(RunFusedGraph(g, FloatOpRegistry(), in)[0], RunFusedGraph(original, FloatOpRegistry(), in)[0]) <
        1e-5);
}

TEST_CASE("Pairs whose intermediate value is needed elsewhere are not rewritten", "[quant]") {
  GraphBuilder b("shared", 7);
  ValueId x = b.Input("x", DType::kF32, Shape{1, 2, 4, 4});
  Conv2dOptions c;
  c.in_channels = 2;
  c.out_channels = 2;
  c.padding = {1, 1};
  ValueId conv = b.Conv2d("conv", x, c);
  ValueId bn = b.BatchNorm2d("bn", conv, 2);
  ValueId sum = b.Add("add", conv, bn);  // conv's output has a second user
  ValueId relu = b.ReLU("relu", sum);
  ValueId sum2 = b.Add("add2", relu, x);
  ValueId relu2 = b.ReLU("relu2", sum2);
  b.Output(relu2);
  b.Output(sum2);  // add2's output is a graph output: add2 + relu2 must not fuse
  Graph g = std::move(b).Build().value();
  auto report = Fuse(g);
  REQUIRE(report.ok());
  CHECK(report->folded_batch_norms.empty());
  CHECK(report->fused_activations == std::vector<std::string>{"relu"});
  CHECK(FusedActivation(g.node(g.FindNode("add"))) == "Relu");
  CHECK(g.FindNode("relu2") >= 0);
  CHECK(g.FindNode("bn") >= 0);
}

TEST_CASE("Folding copies a weight that another node shares", "[quant]") {
  GraphBuilder b("tied", 3);
  ValueId x = b.Input("x", DType::kF32, Shape{2, 4});
  ValueId w = b.Constant("w", b.UniformTensor(Shape{4, 4}, 0.5f));
  ValueId y1 = b.Op1("Gemm", "fc_a", {x, w}, {{"transB", 1}});
  ValueId y2 = b.Op1("Gemm", "fc_b", {x, w}, {{"transB", 1}});
  ValueId bn = b.BatchNorm2d("bn", y1, 4);
  b.Output(bn);
  b.Output(y2);
  Graph g = std::move(b).Build().value();
  std::mt19937_64 rng(11);
  testing::RandomizeBatchNorms(g, rng);
  const Graph original = g;
  REQUIRE(FoldBatchNorm(g).value() == std::vector<std::string>{"bn"});
  const Node& a = g.node(g.FindNode("fc_a"));
  CHECK(g.value(a.inputs[1]).name != "w");  // fc_a got its own folded copy
  CHECK(g.node(g.FindNode("fc_b")).inputs[1] == g.FindValue("w"));
  const Tensor xin = RandomTensor(rng, Shape{2, 4}, -1.0f, 1.0f);
  const auto y0 = RunFusedGraph(original, FloatOpRegistry(), {xin});
  const auto y1f = RunFusedGraph(g, FloatOpRegistry(), {xin});
  CHECK(RelativeError(y1f[0], y0[0]) < 1e-5);
  CHECK(RelativeError(y1f[1], y0[1]) == 0.0);  // fc_b untouched
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

// ONNX exports Clip's bounds (opset >= 11) and Reshape's shape as Constant nodes; Fuse turns them into constants
// so Convert can read them (MobileNetV2's ReLU6 then becomes an int8 QClamp instead of a float island).
Tensor Floats(const Shape& shape, const std::vector<float>& values) {
  Tensor t = Tensor::Create(DType::kF32, shape).value();
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

TEST_CASE("Fuse folds Constant nodes into constant values", "[quant]") {
  Graph g("clip");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{5}).value();
  const ValueId lo = g.AddNodeValue("lo").value();
  const ValueId hi = g.AddNodeValue("hi").value();
  const ValueId y = g.AddNodeValue("y").value();
  REQUIRE(g.AddNode(Node{"c_lo", "Constant", "", {{"value", Floats(Shape{}, {0.0f})}}, {}, {lo}}).ok());
  REQUIRE(g.AddNode(Node{"c_hi", "Constant", "", {{"value", Floats(Shape{}, {6.0f})}}, {}, {hi}}).ok());
  REQUIRE(g.AddNode(Node{"c_keep", "Constant", "", {{"value_float", 1.0f}}, {}, {g.AddNodeValue("k").value()}}).ok());
  REQUIRE(g.AddNode(Node{"relu6", "Clip", "", {}, {x, lo, hi}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  const Tensor in = Floats(Shape{5}, {-1.0f, 0.5f, 3.0f, 6.5f, 9.0f});
  const std::vector<Tensor> before = RunFusedGraph(g, FloatOpRegistry(), {in});
  auto report = Fuse(g);
  REQUIRE(report.ok());
  CHECK(report->folded_constant_nodes == std::vector<std::string>{"c_lo", "c_hi"});
  REQUIRE(g.num_nodes() == 2);  // the value_float Constant stays a node
  CHECK(g.value(lo).kind == ValueKind::kConstant);
  CHECK(g.value(hi).data.data<float>()[0] == 6.0f);
  CHECK(VerifyGraph(g).ok());
  const std::vector<Tensor> after = RunFusedGraph(g, QuantFloatRegistry(), {in});
  CHECK(std::memcmp(before[0].raw_data(), after[0].raw_data(), before[0].SizeBytes()) == 0);
}

}  // namespace
}  // namespace octet
