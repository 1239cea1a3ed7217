// Convert's graph structure on small builder graphs: which int8 operators replace which nodes, names, qparams on
// every integer value, weights and biases quantized as the profile says, float islands with one Dequantize per
// value, shared-qparams chains, Requantize between qconfigs of different dtypes, and errors naming node and value.
// These need no int8 kernels; tests/quant/convert_run_test.cc runs converted graphs.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "core/builder.h"
#include "observers/qparams_math.h"
#include "ops/reference/qgemm_reference.h"
#include "ops/reference/quantize_reference.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::RandomTensor;

// x86's layout (u8 [0, 127] activations, per-channel symmetric s8 weights) with MinMax activations.
QConfig ConvertMinMaxQConfig() { return testing::X86QConfig(ObserverKind::kMinMax); }

PreparedGraph Calibrated(const Graph& graph, const QConfigMapping& mapping, const Shape& batch_shape,
                         std::string_view salt) {
  auto prepared = Prepare(graph, mapping);
  INFO(prepared.status().message());
  REQUIRE(prepared.ok());
  std::mt19937_64 rng = testing::MakeRng(salt);
  std::vector<std::vector<Tensor>> batches;
  for (int i = 0; i < 3; ++i) batches.push_back({RandomTensor(rng, batch_shape, -1.5f + 0.3f * i, 1.2f + 0.2f * i)});
  testing::CalibrateQuietly(*prepared, batches);
  return std::move(*prepared);
}

Graph MustConvert(const PreparedGraph& p, NumericsProfile profile = NumericsProfile::kReference,
                  ConvertReport* report = nullptr) {
  ConvertOptions o;
  o.profile = profile;
  auto g = Convert(p, o, report);
  INFO(g.status().message());
  REQUIRE(g.ok());
  return std::move(*g);
}

const Node& NodeNamed(const Graph& g, const std::string& name) {
  const int i = g.FindNode(name);
  INFO("node " << name);
  REQUIRE(i >= 0);
  return g.node(i);
}

const Value& ValueNamed(const Graph& g, const std::string& name) {
  const ValueId id = g.FindValue(name);
  INFO("value " << name);
  REQUIRE(id != kNoValue);
  return g.value(id);
}

std::vector<std::string> InputNames(const Graph& g, const Node& n) {
  std::vector<std::string> names;
  for (ValueId v : n.inputs) names.push_back(v == kNoValue ? "" : g.value(v).name);
  return names;
}

std::string OutputName(const Graph& g, const Node& n) { return g.value(n.outputs.at(0)).name; }

std::vector<std::string> NodeList(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) out.push_back(n.name + ":" + n.op_type);
  return out;
}

bool SameQParams(const QParams& a, const QParams& b) { return a.ToString() == b.ToString(); }

std::string StringAttr(const Node& n, const std::string& name) {
  const Attribute* a = n.attributes.Find(name);
  return a != nullptr && a->type() == AttrType::kString ? a->s() : "";
}

// Every integer value carries qparams of its dtype; every f32 value none; names are unique (Convert verifies).
void CheckQParamsEverywhere(const Graph& g) {
  std::set<std::string> node_names;
  for (const Node& n : g.nodes()) {
    CHECK(node_names.insert(n.name).second);
    for (ValueId v : n.outputs) {
      if (v == kNoValue) continue;
      const Value& val = g.value(v);
      INFO(n.name << " -> " << val.name);
      if (val.dtype == DType::kF32) {
        CHECK_FALSE(val.qparams.has_value());
      } else {
        REQUIRE(val.qparams.has_value());
        CHECK(val.qparams->dtype() == val.dtype);
      }
    }
  }
}

TEST_CASE("Convert turns the small CNN into int8 operators with Q at the input and DQ at the output", "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("convert_small_cnn");
  const Graph original = testing::SmallCnn(rng());
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(original, mapping, Shape{4, 3, 8, 8}, "convert_small_cnn_batches");
  const auto observed = p.CalculateQParams().value();
  ConvertReport report;
  const Graph g = MustConvert(p, NumericsProfile::kReference, &report);

  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize:Quantize", "conv1:QConv", "pool1:QMaxPool",
                                                  "flatten:Flatten", "fc1:QGemm", "fc2:QGemm",
                                                  "fc2.dequantize:Dequantize"});
  CHECK(report.quantized == std::vector<std::string>{"conv1", "pool1", "flatten", "fc1", "fc2"});
  CHECK(report.kept_float.empty());
  CheckQParamsEverywhere(g);

  // Graph edges: f32 under their own names.
  REQUIRE(g.inputs().size() == 1);
  CHECK(g.value(g.inputs()[0]).name == "x");
  CHECK(g.value(g.inputs()[0]).dtype == DType::kF32);
  REQUIRE(g.outputs().size() == 1);
  CHECK(g.value(g.outputs()[0]).name == "fc2");
  const Node& q = NodeNamed(g, "x.quantize");
  CHECK(q.domain == "octet");
  CHECK(InputNames(g, q) == std::vector<std::string>{"x"});
  CHECK(OutputName(g, q) == "x.q");
  CHECK(SameQParams(*ValueNamed(g, "x.q").qparams, observed.at("x")));
  CHECK(q.attributes.empty());  // the reference profile's quantize is the default one
  const Node& dq = NodeNamed(g, "fc2.dequantize");
  CHECK(InputNames(g, dq) == std::vector<std::string>{"fc2.q"});
  CHECK(SameQParams(*ValueNamed(g, "fc2.q").qparams, observed.at("fc2")));

  // conv1 (Conv + folded BatchNorm + ReLU): the folded weight quantized with its observer's per-channel qparams.
  const Node& conv = NodeNamed(g, "conv1");
  CHECK(conv.domain == "octet");
  CHECK(InputNames(g, conv) == std::vector<std::string>{"x.q", "conv1.weight", "conv1.bias"});
  CHECK(OutputName(g, conv) == "relu1");  // the fused ReLU's value, as in the prepared graph
  CHECK(StringAttr(conv, "activation") == "Relu");
  CHECK(StringAttr(conv, "requantization") == "fp32");
  CHECK(conv.attributes.Has("pads"));
  const Value& w = ValueNamed(g, "conv1.weight");
  const Tensor& wf = ValueNamed(p.graph(), "conv1.weight").data;
  REQUIRE(w.dtype == DType::kS8);
  REQUIRE(w.kind == ValueKind::kConstant);
  const QParams& wq = *w.qparams;
  CHECK(SameQParams(wq, observed.at("conv1.weight")));
  REQUIRE(wq.per_channel());
  CHECK(wq.axis() == 0);
  REQUIRE(wq.num_channels() == 8);
  const int64_t per_channel = wf.NumElements() / 8;
  int distinct = 0;
  for (int64_t i = 0; i < wf.NumElements(); ++i) {
    const size_t c = static_cast<size_t>(i / per_channel);
    const int8_t expect = reference::QuantizeValue<int8_t>(wf.data<float>()[i], 1.0f / wq.scales()[c], 0, -128, 127);
    INFO("weight element " << i);
    REQUIRE(w.data.data<int8_t>()[i] == expect);
    distinct += expect != 0 ? 1 : 0;
  }
  CHECK(distinct > wf.NumElements() / 2);  // not a degenerate all-zero weight
  // Bias: s32, rne(b / (a_scale * w_scale[c])) with qparams (a_scale * w_scale[c], 0).
  const Value& b = ValueNamed(g, "conv1.bias");
  const Tensor& bf = ValueNamed(p.graph(), "conv1.bias").data;
  REQUIRE(b.dtype == DType::kS32);
  const float sx = observed.at("x").scale();
  REQUIRE(b.qparams->num_channels() == 8);
  for (size_t c = 0; c < 8; ++c) {
    INFO("bias channel " << c);
    CHECK(b.data.data<int32_t>()[c] == reference::QuantizeBias(bf.data<float>()[c], sx, wq.scales()[c]));
    // Independently, in double: at most one step away (float rounding of the reciprocal near a tie).
    const double direct = std::nearbyint(bf.data<float>()[c] / (double(sx) * wq.scales()[c]));
    CHECK(std::abs(direct - b.data.data<int32_t>()[c]) <= 1);
    CHECK(b.qparams->scales()[c] == sx * wq.scales()[c]);
    CHECK(b.qparams->zero_points()[c] == 0);
  }

  // The shared-qparams chain relu1 -> pool1 -> flatten: one set of qparams, no requantization.
  const QParams& q_relu1 = *ValueNamed(g, "relu1").qparams;
  CHECK(SameQParams(q_relu1, observed.at("relu1")));
  CHECK(SameQParams(*ValueNamed(g, "pool1").qparams, q_relu1));
  CHECK(SameQParams(*ValueNamed(g, "flatten").qparams, q_relu1));
  CHECK(NodeNamed(g, "flatten").domain.empty());
  CHECK(NodeNamed(g, "pool1").attributes.Has("kernel_shape"));

  // The Linear layers: QGemm with transB = 1 weights per channel along axis 0.
  const Node& fc1 = NodeNamed(g, "fc1");
  CHECK(InputNames(g, fc1) == std::vector<std::string>{"flatten", "fc1.weight", "fc1.bias"});
  CHECK(StringAttr(fc1, "activation") == "Relu");
  CHECK(OutputName(g, fc1) == "relu2");
  CHECK(ValueNamed(g, "fc1.weight").qparams->axis() == 0);
  const Node& fc2 = NodeNamed(g, "fc2");
  CHECK_FALSE(fc2.attributes.Has("activation"));
  CHECK(InputNames(g, fc2) == std::vector<std::string>{"relu2", "fc2.weight", "fc2.bias"});
  CHECK(ValueNamed(g, "fc2.bias").qparams->scales()[0] ==
        observed.at("relu2").scale() * ValueNamed(g, "fc2.weight").qparams->scales()[0]);
}

TEST_CASE("Convert follows the numerics profile: requantization, bias, weight range and quantize rounding",
          "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("convert_profiles");
  const Graph original = testing::SmallCnn(rng());
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(original, mapping, Shape{2, 3, 8, 8}, "convert_profiles_batches");
  const auto observed = p.CalculateQParams().value();

  SECTION("tflite: q31, symmetric weights re-derived over [-127, 127], half-away quantize") {
    const Graph g = MustConvert(p, NumericsProfile::kTflite);
    CHECK(StringAttr(NodeNamed(g, "conv1"), "requantization") == "q31");
    CHECK(StringAttr(NodeNamed(g, "x.quantize"), "rounding") == "half_away");
    const Value& w = ValueNamed(g, "fc1.weight");
    const QParams& wq = *w.qparams;
    CHECK(wq.quant_min() == -127);
    CHECK(wq.quant_max() == 127);
    const Observer* obs = p.FindObserver("fc1.weight");
    REQUIRE(obs != nullptr);
    REQUIRE(wq.num_channels() == 16);
    for (size_t c = 0; c < 16; ++c) {
      const float amax = std::max(-obs->min_val()[c], obs->max_val()[c]);
      CHECK(wq.scales()[c] == amax / 127.0f);  // PyTorch's formula: amax / ((127 - -127) / 2)
      CHECK(wq.scales()[c] > observed.at("fc1.weight").scales()[c]);  // the x86 observer divided by 127.5
    }
    int at_limit = 0;
    for (int8_t v : w.data.values<int8_t>()) {
      CHECK(v >= -127);
      at_limit += v == 127 || v == -127 ? 1 : 0;
    }
    CHECK(at_limit >= 16);  // each channel's extreme lands on ±127
    // The bias follows the re-derived weight scale.
    CHECK(ValueNamed(g, "fc1.bias").qparams->scales()[3] == observed.at("flatten").scale() * wq.scales()[3]);
  }
  SECTION("pytorch-fbgemm: float bias added before the multiply, PyTorch's non-finite quantize") {
    const Graph g = MustConvert(p, NumericsProfile::kPytorchFbgemm);
    const Node& fc2 = NodeNamed(g, "fc2");
    CHECK(StringAttr(fc2, "requantization") == "fbgemm");
    const Value& b = ValueNamed(g, "fc2.bias");
    CHECK(b.dtype == DType::kF32);
    CHECK_FALSE(b.qparams.has_value());
    const Tensor& bf = ValueNamed(p.graph(), "fc2.bias").data;
    for (int64_t i = 0; i < bf.NumElements(); ++i) CHECK(b.data.data<float>()[i] == bf.data<float>()[i]);
    CHECK(StringAttr(NodeNamed(g, "x.quantize"), "non_finite") == "quant_min");
    CHECK(SameQParams(*ValueNamed(g, "fc2.weight").qparams, observed.at("fc2.weight")));  // [-128, 127] as observed
  }
  SECTION("pytorch-qnnpack: fp32 requantization, int32 bias") {
    const Graph g = MustConvert(p, NumericsProfile::kPytorchQnnpack);
    CHECK(StringAttr(NodeNamed(g, "fc2"), "requantization") == "fp32");
    CHECK(ValueNamed(g, "fc2.bias").dtype == DType::kS32);
  }
}

TEST_CASE("A node skipped by the mapping stays float between a Dequantize and a Quantize", "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("convert_skip");
  const Graph original = testing::SmallCnn(rng());
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig()).SetModuleName("fc1", std::nullopt);
  const PreparedGraph p = Calibrated(original, mapping, Shape{2, 3, 8, 8}, "convert_skip_batches");
  const auto observed = p.CalculateQParams().value();
  ConvertReport report;
  const Graph g = MustConvert(p, NumericsProfile::kReference, &report);
  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize:Quantize", "conv1:QConv", "pool1:QMaxPool",
                                                  "flatten:Flatten", "flatten.dequantize:Dequantize", "fc1:Gemm",
                                                  "relu2.quantize:Quantize", "fc2:QGemm",
                                                  "fc2.dequantize:Dequantize"});
  REQUIRE(report.kept_float.size() == 1);
  CHECK(report.kept_float[0].node == "fc1");
  CHECK_THAT(report.kept_float[0].reason, Catch::Contains("none"));
  CheckQParamsEverywhere(g);
  // The float node keeps its fused form, float weights and names.
  const Node& fc1 = NodeNamed(g, "fc1");
  CHECK(fc1.domain == "octet");
  CHECK(StringAttr(fc1, "activation") == "Relu");
  CHECK(InputNames(g, fc1) == std::vector<std::string>{"flatten.dq", "fc1.weight", "fc1.bias"});
  CHECK(ValueNamed(g, "fc1.weight").dtype == DType::kF32);
  CHECK(OutputName(g, fc1) == "relu2");
  CHECK(ValueNamed(g, "relu2").dtype == DType::kF32);
  // Its output is quantized for fc2 with the qparams observed for it.
  CHECK(InputNames(g, NodeNamed(g, "relu2.quantize")) == std::vector<std::string>{"relu2"});
  CHECK(SameQParams(*ValueNamed(g, "relu2.q").qparams, observed.at("relu2")));
  CHECK(InputNames(g, NodeNamed(g, "fc2"))[0] == "relu2.q");
  CHECK(ValueNamed(g, "fc2.bias").qparams->scales()[0] ==
        observed.at("relu2").scale() * ValueNamed(g, "fc2.weight").qparams->scales()[0]);
}

TEST_CASE("ConvertOptions::keep_float keeps nodes float with the observers of a fully calibrated graph",
          "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("convert_keep_float");
  const Graph original = testing::SmallCnn(rng());
  QConfigMapping all;
  all.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(original, all, Shape{2, 3, 8, 8}, "convert_keep_float_batches");
  ConvertOptions o;
  o.keep_float = {"fc1"};
  ConvertReport report;
  auto g = Convert(p, o, &report);
  INFO(g.status().message());
  REQUIRE(g.ok());
  // The same graph as a mapping that skips fc1 (the observers of its neighbours exist either way).
  CHECK(NodeList(*g) == std::vector<std::string>{"x.quantize:Quantize", "conv1:QConv", "pool1:QMaxPool",
                                                   "flatten:Flatten", "flatten.dequantize:Dequantize", "fc1:Gemm",
                                                   "relu2.quantize:Quantize", "fc2:QGemm",
                                                   "fc2.dequantize:Dequantize"});
  REQUIRE(report.kept_float.size() == 1);
  CHECK(report.kept_float[0].node == "fc1");
  CHECK_THAT(report.kept_float[0].reason, Catch::Contains("keep_float"));
  CheckQParamsEverywhere(*g);
  // Every node kept float: the prepared float graph itself, no Quantize or Dequantize left.
  o.keep_float = {"conv1", "pool1", "flatten", "fc1", "fc2"};
  auto all_float = Convert(p, o);
  REQUIRE(all_float.ok());
  CHECK(NodeList(*all_float) == NodeList(p.graph()));
  // A name that is no node fails, naming it.
  o.keep_float = {"fc9"};
  auto bad = Convert(p, o);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'fc9'") && Catch::Contains("keep_float"));
}

TEST_CASE("Float consumers share one Dequantize per value; Softmax over axis 0 and unknown ops stay float", "[convert]") {
  GraphBuilder b("islands", 3);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 6});
  ValueId h = b.Linear("fc", x, 6, 5);
  ValueId s = b.Softmax("softmax", h, 0);
  ValueId e = b.Op1("Erf", "gelu", {h});
  ValueId m = b.Mul("mul", s, e);  // int8 again, from two float producers
  b.Output(m);
  b.Output(s);
  const Graph graph = std::move(b).Build().value();
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(graph, mapping, Shape{3, 6}, "convert_islands");
  const auto observed = p.CalculateQParams().value();
  ConvertReport report;
  const Graph g = MustConvert(p, NumericsProfile::kReference, &report);
  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize:Quantize", "fc:QGemm", "fc.dequantize:Dequantize",
                                                  "softmax:Softmax", "gelu:Erf", "softmax.quantize:Quantize",
                                                  "gelu.quantize:Quantize", "mul:QMul", "mul.dequantize:Dequantize"});
  CHECK(InputNames(g, NodeNamed(g, "softmax")) == std::vector<std::string>{"fc.dq"});
  CHECK(InputNames(g, NodeNamed(g, "gelu")) == std::vector<std::string>{"fc.dq"});
  CHECK(InputNames(g, NodeNamed(g, "mul")) == std::vector<std::string>{"softmax.q", "gelu.q"});
  CHECK(SameQParams(*ValueNamed(g, "gelu.q").qparams, observed.at("gelu")));
  // softmax is a graph output and an int8 input: its f32 form keeps the name.
  std::vector<std::string> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(g.value(v).name);
  CHECK(outputs == std::vector<std::string>{"mul", "softmax"});
  REQUIRE(report.kept_float.size() == 2);
  CHECK(report.kept_float[0].node == "softmax");
  CHECK_THAT(report.kept_float[0].reason, Catch::Contains("Softmax"));
  CHECK(report.kept_float[1].node == "gelu");
  CHECK_THAT(report.kept_float[1].reason, Catch::Contains("no int8 operator for Erf"));
  CheckQParamsEverywhere(g);
}

TEST_CASE("Shared-qparams ops pass their input's qparams through; Dropout becomes Identity", "[convert]") {
  GraphBuilder b("shared", 4);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 2, 6, 6});
  Conv2dOptions c;
  c.in_channels = 2;
  c.out_channels = 4;
  ValueId y = b.Conv2d("conv", x, c);
  y = b.MaxPool2d("pool", y, Pool2dOptions{});
  y = b.ReLU("relu", y);  // after the pool: not fused
  y = b.ReLU6("relu6", y);
  y = b.Dropout("drop", y);
  y = b.Reshape("reshape", y, {0, 16});
  y = b.Transpose("transpose", y, {1, 0});
  b.Output(y);
  const Graph graph = std::move(b).Build().value();
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(graph, mapping, Shape{2, 2, 6, 6}, "convert_shared");
  const Graph g = MustConvert(p);
  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize:Quantize", "conv:QConv", "pool:QMaxPool",
                                                  "relu:QClamp", "relu6:QClamp", "drop:Identity",
                                                  "reshape:Reshape", "transpose:Transpose",
                                                  "transpose.dequantize:Dequantize"});
  const QParams& qc = *ValueNamed(g, "conv").qparams;
  for (const char* v : {"pool", "relu", "relu6", "drop", "reshape", "transpose.q"}) {
    INFO(v);
    CHECK(SameQParams(*ValueNamed(g, v).qparams, qc));
  }
  const Node& relu = NodeNamed(g, "relu");
  CHECK(relu.attributes.Find("min")->f() == 0.0f);
  CHECK_FALSE(relu.attributes.Has("max"));
  const Node& relu6 = NodeNamed(g, "relu6");
  CHECK(InputNames(g, relu6) == std::vector<std::string>{"relu"});  // bounds moved to attributes
  CHECK(relu6.attributes.Find("min")->f() == 0.0f);
  CHECK(relu6.attributes.Find("max")->f() == 6.0f);
  CHECK(g.FindValue("relu6.min") == kNoValue);
  const Node& drop = NodeNamed(g, "drop");
  CHECK(drop.domain.empty());
  CHECK(drop.inputs.size() == 1);
  // Shape ops keep ONNX's domain and take their shape input unchanged.
  const Node& reshape = NodeNamed(g, "reshape");
  CHECK(reshape.domain.empty());
  CHECK(InputNames(g, reshape) == std::vector<std::string>{"drop", "reshape.shape"});
  CHECK(ValueNamed(g, "reshape.shape").kind == ValueKind::kConstant);
  CHECK_FALSE(ValueNamed(g, "reshape.shape").qparams.has_value());
  CHECK(NodeNamed(g, "transpose").attributes.Has("perm"));
  CheckQParamsEverywhere(g);
}

TEST_CASE("Add, Mul, pools and lookups become QAdd, QMul, QAveragePool and QLookup", "[convert]") {
  GraphBuilder b("general", 6);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 3, 4, 4});
  ValueId k = b.Constant("k", b.UniformTensor(Shape{1, 3, 1, 1}, 1.0f));
  ValueId a = b.Sigmoid("sig", x);
  ValueId t = b.LeakyReLU("leaky", x, 0.2f);
  ValueId s = b.Add("add", a, t);
  ValueId r = b.ReLU("add_relu", s);  // fuses into add
  ValueId m = b.Mul("scale", r, k);    // a constant operand: quantized at Convert
  ValueId pool = b.AvgPool2d("avg", m, Pool2dOptions{});
  ValueId gap = b.AdaptiveAvgPool2d1("gap", pool);
  ValueId hs = b.Hardswish("hswish", gap);
  b.Output(hs);
  const Graph graph = std::move(b).Build().value();
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(graph, mapping, Shape{2, 3, 4, 4}, "convert_general");
  const auto observed = p.CalculateQParams().value();
  const Graph g = MustConvert(p);
  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize:Quantize", "sig:QLookup", "leaky:QLookup",
                                                  "add:QAdd", "scale:QMul", "avg:QAveragePool",
                                                  "gap:QGlobalAveragePool", "hswish:QLookup",
                                                  "hswish.dequantize:Dequantize"});
  CHECK(StringAttr(NodeNamed(g, "sig"), "function") == "Sigmoid");
  const Node& leaky = NodeNamed(g, "leaky");
  CHECK(StringAttr(leaky, "function") == "LeakyRelu");
  CHECK(leaky.attributes.Find("alpha")->f() == 0.2f);
  CHECK(StringAttr(NodeNamed(g, "hswish"), "function") == "HardSwish");
  const Node& add = NodeNamed(g, "add");
  CHECK(StringAttr(add, "activation") == "Relu");
  CHECK(InputNames(g, add) == std::vector<std::string>{"sig", "leaky"});
  CHECK(OutputName(g, add) == "add_relu");
  // The constant operand: an integer constant under its own name, quantized with its observed qparams.
  const Value& kq = ValueNamed(g, "k");
  REQUIRE(kq.kind == ValueKind::kConstant);
  CHECK(kq.dtype == DType::kU8);
  const QParams& qk = observed.at("k");
  CHECK(SameQParams(*kq.qparams, qk));
  const Tensor& kf = ValueNamed(p.graph(), "k").data;
  for (int64_t i = 0; i < kf.NumElements(); ++i) {
    CHECK(kq.data.data<uint8_t>()[i] == reference::QuantizeValue<uint8_t>(kf.data<float>()[i], 1.0f / qk.scale(),
                                                                          qk.zero_point(), 0, 127));
  }
  CHECK(InputNames(g, NodeNamed(g, "scale")) == std::vector<std::string>{"add_relu", "k"});
  for (const char* v : {"sig", "leaky", "add_relu", "scale", "avg", "gap", "hswish.q"}) {
    INFO(v);
    const std::string name = std::string(v) == "hswish.q" ? "hswish" : v;
    CHECK(SameQParams(*ValueNamed(g, v).qparams, observed.at(name)));
  }
  CheckQParamsEverywhere(g);
}

TEST_CASE("MatMul with a constant weight becomes QMatMul; with two activations QBatchMatMul", "[convert]") {
  GraphBuilder b("matmuls", 8);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 5, 6});
  ValueId w = b.Constant("w", b.UniformTensor(Shape{6, 4}, 0.5f));
  ValueId y = b.MatMul("proj", x, w);
  ValueId yt = b.Transpose("yt", y, {0, 2, 1});
  ValueId z = b.MatMul("scores", y, yt);
  b.Output(z);
  const Graph graph = std::move(b).Build().value();
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(graph, mapping, Shape{2, 5, 6}, "convert_matmul");
  ConvertReport report;
  const Graph g = MustConvert(p, NumericsProfile::kReference, &report);
  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize:Quantize", "proj:QMatMul", "yt:Transpose",
                                                  "scores:QBatchMatMul", "scores.dequantize:Dequantize"});
  const Value& wq = ValueNamed(g, "w");
  CHECK(wq.dtype == DType::kS8);
  CHECK(wq.qparams->axis() == 1);
  CHECK(wq.qparams->num_channels() == 4);
  CHECK(NodeNamed(g, "proj").inputs.size() == 2);
  CHECK(report.kept_float.empty());
  CHECK(g.value(g.outputs()[0]).name == "scores");
}

TEST_CASE("A consumer whose QConfig wants another activation dtype gets a Requantize", "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("convert_requantize");
  const Graph original = testing::SmallCnn(rng());
  QConfig s8 = GetDefaultQConfig("symmetric").value();
  s8.activation = ObserverSpec{ObserverKind::kMinMax, {}};
  s8.activation.options.dtype = DType::kS8;
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig()).SetModuleName("fc2", s8);
  const PreparedGraph p = Calibrated(original, mapping, Shape{2, 3, 8, 8}, "convert_requantize_batches");
  const auto observed = p.CalculateQParams().value();
  const Graph g = MustConvert(p);
  // relu2 is fc1's output (x86: u8 [0, 127]); fc2 reads s8.
  const Node& rq = NodeNamed(g, "relu2.requantize");
  CHECK(rq.op_type == "Requantize");
  CHECK(InputNames(g, rq) == std::vector<std::string>{"relu2"});
  CHECK(InputNames(g, NodeNamed(g, "fc2"))[0] == "relu2.rq");
  const QParams& from = observed.at("relu2");
  const QParams& to = *ValueNamed(g, "relu2.rq").qparams;
  CHECK(to.dtype() == DType::kS8);
  CHECK(to.quant_min() == -128);
  // The same real range: [0, 127 * s] (u8 zero point 0) over [-128, 127].
  CHECK(from.zero_point() == 0);
  CHECK(to.scale() == Approx(from.scale() * 127.0f / 255.0f).epsilon(1e-6));
  CHECK(to.zero_point() == -128);
  CHECK(ValueNamed(g, "fc2.q").dtype == DType::kS8);  // fc2's own output observer is s8
  // The bias uses the scale fc2 actually reads.
  CHECK(ValueNamed(g, "fc2.bias").qparams->scales()[0] ==
        to.scale() * ValueNamed(g, "fc2.weight").qparams->scales()[0]);
  CheckQParamsEverywhere(g);
}

TEST_CASE("A float value read in two dtypes is quantized twice from float, not requantized", "[convert]") {
  GraphBuilder b("two_dtypes", 12);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 6});
  b.Output(b.Linear("a", x, 6, 3));
  b.Output(b.Linear("b", x, 6, 3));
  const Graph graph = std::move(b).Build().value();
  QConfig s8 = GetDefaultQConfig("symmetric").value();
  s8.activation = ObserverSpec{ObserverKind::kMinMax, {}};
  s8.activation.options.dtype = DType::kS8;
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig()).SetModuleName("b", s8);
  const PreparedGraph p = Calibrated(graph, mapping, Shape{4, 6}, "convert_two_dtypes");
  const Graph g = MustConvert(p);
  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize:Quantize", "a:QGemm", "x.quantize_1:Quantize",
                                                  "b:QGemm", "a.dequantize:Dequantize", "b.dequantize:Dequantize"});
  CHECK(ValueNamed(g, "x.q").dtype == DType::kU8);
  CHECK(ValueNamed(g, "x.q_1").dtype == DType::kS8);
  CHECK(InputNames(g, NodeNamed(g, "x.quantize_1")) == std::vector<std::string>{"x"});
  CHECK(InputNames(g, NodeNamed(g, "b"))[0] == "x.q_1");
}

TEST_CASE("Dynamic QConfigs are left float for QuantizeDynamic", "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("convert_dynamic");
  const Graph original = testing::SmallCnn(rng());
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig()).SetModuleName("fc1", GetDefaultDynamicQConfig());
  const PreparedGraph p = Calibrated(original, mapping, Shape{2, 3, 8, 8}, "convert_dynamic_batches");
  ConvertReport report;
  const Graph g = MustConvert(p, NumericsProfile::kReference, &report);
  CHECK(NodeNamed(g, "fc1").op_type == "Gemm");
  REQUIRE(report.kept_float.size() == 1);
  CHECK_THAT(report.kept_float[0].reason, Catch::Contains("dynamic"));
  CHECK(NodeNamed(g, "fc2").op_type == "QGemm");
}

TEST_CASE("Derived names never collide with the graph's own names", "[convert]") {
  GraphBuilder b("names", 9);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 4});
  ValueId h = b.Linear("x.q", x, 4, 4);  // a node and value that take Convert's favourite derived name
  ValueId y = b.Linear("x.quantize", h, 4, 3);
  b.Output(y);
  const Graph graph = std::move(b).Build().value();
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  const PreparedGraph p = Calibrated(graph, mapping, Shape{2, 4}, "convert_names");
  const Graph g = MustConvert(p);
  CHECK(NodeList(g) == std::vector<std::string>{"x.quantize_1:Quantize", "x.q:QGemm", "x.quantize:QGemm",
                                                  "x.quantize.dequantize:Dequantize"});
  CHECK(OutputName(g, NodeNamed(g, "x.quantize_1")) == "x.q_1");
  CHECK(InputNames(g, NodeNamed(g, "x.q"))[0] == "x.q_1");
  CHECK(OutputName(g, NodeNamed(g, "x.q")) == "x.q");
}

TEST_CASE("Convert fails naming the value and node it has no qparams for, and unusable weights", "[convert]") {
  const Graph original = testing::SmallCnn(11);
  QConfigMapping mapping;
  mapping.SetGlobal(ConvertMinMaxQConfig());
  SECTION("not calibrated") {
    auto p = Prepare(original, mapping);
    REQUIRE(p.ok());
    auto g = Convert(*p);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.status().message(), Catch::Contains("failed to convert graph 'small_cnn'") &&
                                         Catch::Contains("'x'") && Catch::Contains("conv1"));
  }
  SECTION("one activation observer emptied after calibration") {
    PreparedGraph p = Calibrated(original, mapping, Shape{1, 3, 8, 8}, "convert_reset");
    const int slot = p.slot_of(p.graph().FindValue("relu2"));
    REQUIRE(slot >= 0);
    p.mutable_slots()[static_cast<size_t>(slot)].observer->Reset();
    auto g = Convert(p);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.status().message(), Catch::Contains("'relu2'") && Catch::Contains("'fc1'"));
  }
  SECTION("qint32 activations") {
    QConfig q = ConvertMinMaxQConfig();
    q.activation.options.dtype = DType::kS32;
    q.activation.options.reduce_range = false;
    QConfigMapping m;
    m.SetGlobal(ConvertMinMaxQConfig()).SetModuleName("fc2", q);
    const PreparedGraph p = Calibrated(original, m, Shape{1, 3, 8, 8}, "convert_s32_activations");
    auto g = Convert(p);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.status().message(), Catch::Contains("node 'fc2'") && Catch::Contains("'fc2'") &&
                                         Catch::Contains("per-tensor u8 or s8"));
  }
}

}  // namespace
}  // namespace octet
