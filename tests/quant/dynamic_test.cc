// QuantizeDynamic and QuantizeWeightOnly on small graphs: which nodes become which operators (per QConfigMapping
// entry: global, op type, node name, none; static QConfigs ignored by the dynamic pass), names kept, weights quantized
// by the QConfig's weight observer along the output-channel axis, outputs close to float, and clear errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/executor.h"
#include "observers/per_channel_minmax_observer.h"
#include "ops/float/registry.h"
#include "ops/int8/int8_ops.h"
#include "ops/quantize.h"
#include "quant/dynamic.h"
#include "quant/quantized_registry.h"
#include "quant/weight_only.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

// x [B, 12] -> Gemm fc1 (transB = 1, weight [10, 12], bias) -> Relu -> MatMul fc2 (weight [10, 8]) -> Gemm fc3
// (transB = 0, weight [8, 5], no bias) -> y [B, 5]; and seq [4, B, 4] -> LSTM "lstm" (hidden 3) -> Y.
Graph MakeModel(std::mt19937_64& rng) {
  Graph g("model");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{kUnknownDim, 12}).value();
  auto constant = [&](const std::string& name, Shape s, float r) {
    return g.AddConstant(name, testing::RandomTensor(rng, std::move(s), -r, r)).value();
  };
  auto node = [&](const std::string& name, const std::string& op, std::vector<ValueId> in, AttributeMap at = {}) {
    const ValueId out = g.AddNodeValue(name + ".out").value();
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    n.attributes = std::move(at);
    REQUIRE(g.AddNode(std::move(n)).ok());
    return out;
  };
  AttributeMap tb;
  tb.Set("transB", int64_t{1});
  ValueId h = node("fc1", "Gemm",
                   {x, constant("fc1.weight", Shape{10, 12}, 0.5f), constant("fc1.bias", Shape{10}, 0.2f)}, tb);
  h = node("relu", "Relu", {h});
  h = node("fc2", "MatMul", {h, constant("fc2.weight", Shape{10, 8}, 0.5f)});
  const ValueId y = node("fc3", "Gemm", {h, constant("fc3.weight", Shape{8, 5}, 0.5f)});
  REQUIRE(g.AddOutput(y).ok());

  const ValueId seq = g.AddInput("seq", DType::kF32, Shape{4, kUnknownDim, 4}).value();
  AttributeMap la;
  la.Set("hidden_size", int64_t{3});
  const ValueId ly = g.AddNodeValue("lstm.Y").value();
  Node lstm;
  lstm.name = "lstm";
  lstm.op_type = "LSTM";
  lstm.inputs = {seq, constant("lstm.W", Shape{1, 12, 4}, 0.6f), constant("lstm.R", Shape{1, 12, 3}, 0.6f),
                 constant("lstm.B", Shape{1, 24}, 0.3f)};
  lstm.outputs = {ly};
  lstm.attributes = la;
  REQUIRE(g.AddNode(std::move(lstm)).ok());
  REQUIRE(g.AddOutput(ly).ok());
  return g;
}

std::vector<Tensor> RunDynamicGraph(const Graph& g, const OpRegistry& registry, const std::vector<Tensor>& inputs) {
  const Context ctx = testing::ContextFor(Isa::kScalar);
  CompileOptions co;
  for (size_t i = 0; i < inputs.size(); ++i) {
    co.input_shapes.emplace_back(g.value(g.inputs()[i]).name, inputs[i].shape());
  }
  auto exec = Executor::Compile(g, ctx, registry, co);
  REQUIRE(exec.ok());
  auto y = exec->Run(inputs);
  REQUIRE(y.ok());
  return *y;
}

const Node& DynamicNodeNamed(const Graph& g, const std::string& name) {
  const int i = g.FindNode(name);
  REQUIRE(i >= 0);
  return g.node(i);
}

TEST_CASE("QuantizeDynamic replaces Gemm, MatMul and LSTM by the dynamic operators, names and weights as PyTorch's",
          "[dynamic]") {
  auto rng = testing::MakeRng("quantize dynamic");
  const Graph model = MakeModel(rng);
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultDynamicQConfig(true));
  QuantizeDynamicReport report;
  auto q = QuantizeDynamic(model, mapping, {}, &report);
  REQUIRE(q.ok());
  CHECK(report.quantized == std::vector<std::string>{"fc1", "fc2", "fc3", "lstm"});
  CHECK(report.kept_float.empty());
  CHECK(DynamicNodeNamed(*q, "fc1").op_type == "DynamicQGemm");
  CHECK(DynamicNodeNamed(*q, "fc2").op_type == "DynamicQMatMul");
  CHECK(DynamicNodeNamed(*q, "fc3").op_type == "DynamicQGemm");
  CHECK(DynamicNodeNamed(*q, "lstm").op_type == "DynamicQLSTM");
  CHECK(DynamicNodeNamed(*q, "relu").op_type == "Relu");
  CHECK(DynamicNodeNamed(*q, "fc1").attributes.GetInt("reduce_range").value() == 0);
  // Weights: s8 constants with per-channel symmetric qparams along the output-channel axis, equal to what the
  // weight observer and Quantize give.
  struct W {
    const char* node;
    size_t slot;
    int axis;
  };
  for (const W& w : {W{"fc1", 1, 0}, W{"fc2", 1, 1}, W{"fc3", 1, 1}, W{"lstm", 1, 1}, W{"lstm", 2, 1}}) {
    INFO(w.node << " input " << w.slot);
    const Node& n = DynamicNodeNamed(*q, w.node);
    CHECK(n.domain == kInt8Domain);
    const Value& v = q->value(n.inputs[w.slot]);
    REQUIRE(v.qparams.has_value());
    CHECK(v.data.dtype() == DType::kS8);
    CHECK(v.qparams->scheme() == QScheme::kPerChannelSymmetric);
    CHECK(v.qparams->axis() == w.axis);
    const Value& f = model.value(DynamicNodeNamed(model, w.node).inputs[w.slot]);
    CHECK(v.name == f.name + "_quantized");
    auto obs = GetDefaultDynamicQConfig(true).weight.Make(w.axis).value();
    REQUIRE(obs->Observe(f.data, f.name).ok());
    const QParams expected = obs->CalculateQParams().value();
    CHECK(v.qparams->scales() == expected.scales());
    const QTensor qt = Quantize(testing::ContextFor(Isa::kScalar), f.data, expected).value();
    CHECK(std::vector<int8_t>(qt.values().values<int8_t>().begin(), qt.values().values<int8_t>().end()) ==
          std::vector<int8_t>(v.data.values<int8_t>().begin(), v.data.values<int8_t>().end()));
  }
  // The outputs track float.
  const Tensor x = testing::RandomTensor(rng, Shape{7, 12}, -1.0f, 1.0f);
  const Tensor seq = testing::RandomTensor(rng, Shape{4, 2, 4}, -1.0f, 1.0f);
  const auto yf = RunDynamicGraph(model, FloatOpRegistry(), {x, seq});
  const auto yq = RunDynamicGraph(*q, QuantizedGraphRegistry(), {x, seq});
  for (size_t o = 0; o < yf.size(); ++o) {
    INFO("output " << o << " SQNR " << testing::TensorSqnrDb(yf[o], yq[o]));
    CHECK(testing::TensorSqnrDb(yf[o], yq[o]) > 25.0);
  }
}

TEST_CASE("QuantizeDynamic with per_token marks Gemm and MatMul, not LSTM, and tracks float", "[dynamic]") {
  auto rng = testing::MakeRng("quantize dynamic per token");
  const Graph model = MakeModel(rng);
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultDynamicQConfig(true));
  QuantizeDynamicOptions options;
  options.per_token = true;
  auto q = QuantizeDynamic(model, mapping, options);
  REQUIRE(q.ok());
  for (const char* name : {"fc1", "fc2", "fc3"}) {
    INFO(name);
    CHECK(DynamicNodeNamed(*q, name).attributes.GetInt("per_token", 0).value() == 1);
  }
  CHECK(DynamicNodeNamed(*q, "lstm").attributes.Find("per_token") == nullptr);
  auto plain = QuantizeDynamic(model, mapping);
  REQUIRE(plain.ok());
  CHECK(DynamicNodeNamed(*plain, "fc1").attributes.Find("per_token") == nullptr);
  // Row 0 50x the others: per tensor, it coarsens every row's grid; per token, the other rows keep theirs. Compared
  // on rows 1..6 of output 0 (row 0's energy would hide them).
  Tensor x = testing::RandomTensor(rng, Shape{7, 12}, -1.0f, 1.0f);
  for (int64_t p = 0; p < 12; ++p) x.data<float>()[p] *= 50.0f;
  const Tensor seq = testing::RandomTensor(rng, Shape{4, 2, 4}, -1.0f, 1.0f);
  const auto yf = RunDynamicGraph(model, FloatOpRegistry(), {x, seq});
  const auto yt = RunDynamicGraph(*q, QuantizedGraphRegistry(), {x, seq});
  const auto yp = RunDynamicGraph(*plain, QuantizedGraphRegistry(), {x, seq});
  auto rest = [](const Tensor& y) {
    const int64_t n = y.shape().dim(1);
    return Tensor::FromValues<float>(Shape{6, n}, std::vector<float>(y.data<float>() + n, y.data<float>() + 7 * n))
        .value();
  };
  const double token = testing::TensorSqnrDb(rest(yf[0]), rest(yt[0]));
  const double tensor = testing::TensorSqnrDb(rest(yf[0]), rest(yp[0]));
  INFO("rows 1..6 of output 0: SQNR per token " << token << " dB, per tensor " << tensor << " dB");
  CHECK(token > tensor + 10.0);
}

TEST_CASE("QuantizeDynamic follows the mapping: op types, node names, none, static QConfigs", "[dynamic]") {
  auto rng = testing::MakeRng("quantize dynamic mapping");
  const Graph model = MakeModel(rng);
  {
    QConfigMapping m;
    m.SetObjectType("Gemm", GetDefaultDynamicQConfig(false));
    QuantizeDynamicOptions o;
    o.reduce_range = true;
    auto q = QuantizeDynamic(model, m, o);
    REQUIRE(q.ok());
    CHECK(DynamicNodeNamed(*q, "fc1").op_type == "DynamicQGemm");
    CHECK(DynamicNodeNamed(*q, "fc1").attributes.GetInt("reduce_range").value() == 1);
    CHECK(q->value(DynamicNodeNamed(*q, "fc1").inputs[1]).qparams->scheme() == QScheme::kPerTensorSymmetric);
    CHECK(DynamicNodeNamed(*q, "fc2").op_type == "MatMul");
    CHECK(DynamicNodeNamed(*q, "lstm").op_type == "LSTM");
  }
  {
    QConfigMapping m;
    m.SetGlobal(GetDefaultDynamicQConfig()).SetModuleName("fc3", std::nullopt).SetModuleName("lstm", std::nullopt);
    auto q = QuantizeDynamic(model, m);
    REQUIRE(q.ok());
    CHECK(DynamicNodeNamed(*q, "fc1").op_type == "DynamicQGemm");
    CHECK(DynamicNodeNamed(*q, "fc3").op_type == "Gemm");
    CHECK(DynamicNodeNamed(*q, "lstm").op_type == "LSTM");
  }
  {
    QConfigMapping m;
    m.SetGlobal(GetDefaultQConfig("x86").value());  // static: not this pass's business
    auto q = QuantizeDynamic(model, m);
    REQUIRE(q.ok());
    for (const Node& n : q->nodes()) CHECK(n.domain.empty());
  }
  {
    QConfigMapping m;
    m.SetModuleName("no_such_node", GetDefaultDynamicQConfig());
    CHECK_FALSE(QuantizeDynamic(model, m).ok());
  }
}

TEST_CASE("QuantizeDynamic keeps what it cannot convert float and names bad weights", "[dynamic]") {
  auto rng = testing::MakeRng("quantize dynamic errors");
  Graph model = MakeModel(rng);
  model.mutable_node(model.FindNode("fc3")).attributes.Set("alpha", 0.5f);
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultDynamicQConfig());
  QuantizeDynamicReport report;
  auto q = QuantizeDynamic(model, mapping, {}, &report);
  REQUIRE(q.ok());
  CHECK(DynamicNodeNamed(*q, "fc3").op_type == "Gemm");
  REQUIRE(report.kept_float.size() == 1);
  CHECK_THAT(report.kept_float[0], Catch::StartsWith("fc3:") && Catch::Contains("alpha"));

  model.mutable_value(model.FindValue("fc2.weight")).data.data<float>()[3] = NAN;
  auto bad = QuantizeDynamic(model, mapping);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'fc2.weight'") && Catch::Contains("'fc2'"));

  QConfig unsigned_weights = GetDefaultDynamicQConfig(false);
  unsigned_weights.weight.options.dtype = DType::kU8;
  unsigned_weights.weight.options.qscheme = QScheme::kPerTensorAffine;
  QConfigMapping m2;
  m2.SetGlobal(unsigned_weights);
  auto u8 = QuantizeDynamic(MakeModel(rng), m2);
  REQUIRE_FALSE(u8.ok());
  CHECK_THAT(u8.status().message(), Catch::Contains("weights must be qint8"));
}

TEST_CASE("QuantizeWeightOnly stores s8 weights behind Dequantize nodes and keeps the float operators", "[dynamic]") {
  auto rng = testing::MakeRng("quantize weight only");
  const Graph model = MakeModel(rng);
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultQConfig("x86").value()).SetModuleName("fc3", std::nullopt);
  std::vector<std::string> quantized;
  auto q = QuantizeWeightOnly(model, mapping, {}, &quantized);
  REQUIRE(q.ok());
  CHECK(quantized == std::vector<std::string>{"fc1", "fc2", "lstm"});
  for (const char* name : {"fc1", "fc2", "fc3", "relu", "lstm"}) CHECK(DynamicNodeNamed(*q, name).domain.empty());
  struct W {
    const char* node;
    size_t slot;
    const char* dequantize;
    int axis;
  };
  for (const W& w : {W{"fc1", 1, "fc1.weight_dequantize", 0}, W{"fc2", 1, "fc2.weight_dequantize", 1},
                     W{"lstm", 1, "lstm.W_dequantize", 1}, W{"lstm", 2, "lstm.R_dequantize", 1}}) {
    INFO(w.dequantize);
    const Node& dq = DynamicNodeNamed(*q, w.dequantize);
    CHECK(dq.op_type == "Dequantize");
    CHECK(dq.domain == kInt8Domain);
    CHECK(DynamicNodeNamed(*q, w.node).inputs[w.slot] == dq.outputs[0]);
    const Value& s8 = q->value(dq.inputs[0]);
    CHECK(s8.kind == ValueKind::kConstant);
    CHECK(s8.data.dtype() == DType::kS8);
    REQUIRE(s8.qparams.has_value());
    CHECK(s8.qparams->axis() == w.axis);
    CHECK(s8.qparams->scheme() == QScheme::kPerChannelSymmetric);
  }
  CHECK(q->value(DynamicNodeNamed(*q, "fc3").inputs[1]).dtype == DType::kF32);  // none: untouched
  // Dequantize comes before its consumer.
  CHECK(q->FindNode("fc1.weight_dequantize") < q->FindNode("fc1"));

  const OpRegistry registry = QuantizedGraphRegistry();
  if (registry.Find(kInt8Domain, "Dequantize") == nullptr) {
    testing::Skip("weight-only graph run: the octet.Dequantize operator is not in this build yet");
    return;
  }
  const Tensor x = testing::RandomTensor(rng, Shape{7, 12}, -1.0f, 1.0f);
  const Tensor seq = testing::RandomTensor(rng, Shape{4, 2, 4}, -1.0f, 1.0f);
  const auto yf = RunDynamicGraph(model, FloatOpRegistry(), {x, seq});
  const auto yq = RunDynamicGraph(*q, registry, {x, seq});
  for (size_t o = 0; o < yf.size(); ++o) CHECK(testing::TensorSqnrDb(yf[o], yq[o]) > 30.0);
  // The Dequantize nodes of constant weights are folded at Compile: the float operators run on float weights.
  CompileOptions co;
  co.input_shapes = {{"x", x.shape()}, {"seq", seq.shape()}};
  const Context ctx = testing::ContextFor(Isa::kScalar);
  const Executor exec = Executor::Compile(*q, ctx, registry, co).value();
  for (const char* name :
       {"fc1.weight_dequantize", "fc2.weight_dequantize", "lstm.W_dequantize", "lstm.R_dequantize"}) {
    CHECK(exec.kernel_name(exec.graph().FindNode(name)) == "folded");
  }
}

}  // namespace
}  // namespace octet
