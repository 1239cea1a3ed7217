// Import of quantized ONNX models (issue 23; io/onnx/qdq_import.h, ops/float/quantize_linear.h,
// integer_linear.h): the models of tests/data/models/make_quantized.py (a QDQ graph in ONNX Runtime's layout, a
// QOperator graph) and make_quantized_torch.py (PyTorch 1.13's QDQ export), against ONNX Runtime's outputs with graph
// optimizations off (committed .npy files), and the recognition's report on a group it cannot make int8.
#include "io/onnx/qdq_import.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/executor.h"
#include "core/op_table.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "quant/quantized_registry.h"
#include "tests/test_util.h"

namespace octet {
namespace {

const std::string kQuantizedModelsDir = std::string(OCTET_TEST_DATA_DIR) + "/models/quantized/";

// The number of elements of `got` more than `lsb` (plus float noise) away from `want`.
int64_t QdqImportBeyondOneLsb(const Tensor& got, const Tensor& want, float lsb) {
  REQUIRE(got.shape() == want.shape());
  int64_t bad = 0;
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    bad += std::fabs(got.data<float>()[i] - want.data<float>()[i]) > lsb * 1.001f ? 1 : 0;
  }
  return bad;
}

std::vector<std::string> QdqImportOps(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes()) ops.push_back(n.op_type);
  return ops;
}

// Runs `g` on x, compiled for x's shape (the models' batch dim is dynamic).
Tensor QdqImportRun(const Graph& g, const OpRegistry& registry, const Tensor& x) {
  return testing::RunWithInputShapes(g, Context::Create().value(), registry, {x})[0];
}

// Reads `file` of the quantized test models, recognizing QDQ groups (counted in `report` when given) or, with
// `recognize` false, keeping the ONNX ops as written; a failure fails the test with octet's message.
Graph QdqImportModel(const std::string& file, QdqImportReport* report, bool recognize = true) {
  OnnxImportOptions options;
  options.qdq_report = report;
  options.recognize_qdq = recognize;
  auto g = ReadOnnxModel(kQuantizedModelsDir + file, options);
  INFO(g.status().message());
  REQUIRE(g.ok());
  return std::move(*g);
}

TEST_CASE("A QDQ model in ONNX Runtime's layout imports as octet's int8 graph, within 1 LSB of ONNX Runtime",
          "[onnx][qdq_import]") {
  QdqImportReport report;
  const Graph g = QdqImportModel("qdq_cnn.onnx", &report);
  INFO(g.ToString());
  CHECK(QdqImportOps(g) == std::vector<std::string>{"Quantize", "QConv", "QMaxPool", "QConv", "QAdd", "QConv",
                                                    "QGlobalAveragePool", "Flatten", "QGemm", "Dequantize"});
  CHECK(report.kept_float.empty());
  CHECK(report.groups == 7);
  // The folded Relu of conv1 and the Clip(0, 6) of conv3 (exactly codes 0 and 255 of scale 6/255: its output's full
  // range, so nothing to narrow or fuse); conv2's u8 weight shifted to s8 with its zero point.
  const Node& conv1 = g.node(1);
  CHECK(conv1.attributes.GetString("activation", "").value() == "Relu");
  const Value& w2 = g.value(g.node(3).inputs[1]);
  CHECK(w2.dtype == DType::kS8);
  REQUIRE(w2.qparams);
  CHECK(w2.qparams->zero_point() == 132 - 128);  // the u8 zero point make_quantized.py wrote, minus 128
  CHECK(g.value(g.node(1).inputs[1]).qparams->per_channel());

  const Tensor x = ReadNpy(kQuantizedModelsDir + "qdq_cnn.input0.npy").value();
  const Tensor want = ReadNpy(kQuantizedModelsDir + "qdq_cnn.output0.npy").value();
  const float lsb = 0.02f;  // the output's scale
  CHECK(QdqImportBeyondOneLsb(QdqImportRun(g, QuantizedGraphRegistry(), x), want, lsb) == 0);

  // The same model with its Q/DQ ops run as ONNX ops (no recognition): also within 1 LSB.
  const Graph onnx_ops = QdqImportModel("qdq_cnn.onnx", nullptr, /*recognize=*/false);
  CHECK_FALSE(HasInt8Ops(onnx_ops));
  CHECK(QdqImportBeyondOneLsb(QdqImportRun(onnx_ops, FloatOpRegistry(), x), want, lsb) == 0);
}

TEST_CASE("A QOperator model (QLinearConv, QLinearMatMul) runs within 1 LSB of ONNX Runtime", "[onnx][qdq_import]") {
  const Graph g = QdqImportModel("qop_cnn.onnx", nullptr);
  // The DequantizeLinear -> Flatten -> QuantizeLinear between them has equal qparams: Flatten moves the codes.
  CHECK(QdqImportOps(g) == std::vector<std::string>{"Quantize", "QConv", "QConv", "Flatten", "QMatMul", "Dequantize"});
  const Tensor x = ReadNpy(kQuantizedModelsDir + "qop_cnn.input0.npy").value();
  const Tensor want = ReadNpy(kQuantizedModelsDir + "qop_cnn.output0.npy").value();
  const Tensor got = QdqImportRun(g, QuantizedGraphRegistry(), x);
  CHECK(QdqImportBeyondOneLsb(got, want, 2.0f) == 0);
  // The QLinear ops run as written (octet's kernels not used) give the same integers as QConv / QMatMul.
  const Tensor ref = QdqImportRun(QdqImportModel("qop_cnn.onnx", nullptr, /*recognize=*/false), FloatOpRegistry(), x);
  REQUIRE(ref.shape() == got.shape());
  for (int64_t i = 0; i < got.NumElements(); ++i) CHECK(got.data<float>()[i] == ref.data<float>()[i]);
}

TEST_CASE(
    "PyTorch 1.13's QDQ export (Constant nodes, Casts) imports as octet's int8 graph, within 1 LSB of ONNX "
    "Runtime",
    "[onnx][qdq_import]") {
  QdqImportReport report;
  const Graph g = QdqImportModel("torch_qdq_cnn.onnx", &report);
  INFO(g.ToString());
  CHECK(QdqImportOps(g) == std::vector<std::string>{"Quantize", "QConv", "QMaxPool", "QConv", "QAdd",
                                                    "QGlobalAveragePool", "Flatten", "QGemm", "Dequantize"});
  CHECK(report.kept_float.empty());
  // The output's LSB: the scale of the integers its Dequantize reads.
  const Node& last = g.node(g.num_nodes() - 1);
  REQUIRE(g.value(last.inputs[0]).qparams);
  const float lsb = g.value(last.inputs[0]).qparams->scale();
  const Tensor x = ReadNpy(kQuantizedModelsDir + "torch_qdq_cnn.input0.npy").value();
  const Tensor want = ReadNpy(kQuantizedModelsDir + "torch_qdq_cnn.output0.npy").value();
  CHECK(QdqImportBeyondOneLsb(QdqImportRun(g, QuantizedGraphRegistry(), x), want, lsb) == 0);
}

TEST_CASE("QDQ groups of Concat, Sigmoid, LeakyRelu and Mul import as QConcat, QLookup and QMul",
          "[onnx][qdq_import]") {
  QdqImportReport report;
  const Graph g = QdqImportModel("qdq_misc.onnx", &report);
  CHECK(QdqImportOps(g) == std::vector<std::string>{"Quantize", "QLookup", "QConcat", "QLookup", "QMul", "Dequantize"});
  CHECK(report.kept_float.empty());
  CHECK(g.node(1).attributes.GetString("function").value() == "Sigmoid");
  CHECK(g.node(3).attributes.GetFloat("alpha").value() == 0.1f);
  const Tensor x = ReadNpy(kQuantizedModelsDir + "qdq_misc.input0.npy").value();
  const Tensor want = ReadNpy(kQuantizedModelsDir + "qdq_misc.output0.npy").value();
  CHECK(QdqImportBeyondOneLsb(QdqImportRun(g, QuantizedGraphRegistry(), x), want, 0.04f) == 0);
}

// x -> QuantizeLinear -> DequantizeLinear -> Conv (float weight) -> y: the Q/DQ become octet's ops, the Conv stays
// float and the report says why.
TEST_CASE("QDQ import reports a float node it cannot make int8", "[onnx][qdq_import]") {
  Graph g("partial");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{1, 1, 4, 4}).value();
  const ValueId s = g.AddConstant("s", Tensor::FromValues<float>(Shape{}, std::vector<float>{0.1f}).value()).value();
  const ValueId z = g.AddConstant("z", Tensor::FromValues<uint8_t>(Shape{}, std::vector<uint8_t>{3}).value()).value();
  const ValueId w =
      g.AddConstant("w", Tensor::FromValues<float>(Shape{1, 1, 1, 1}, std::vector<float>{2.0f}).value()).value();
  const ValueId xq = g.AddNodeValue("xq").value();
  const ValueId xd = g.AddNodeValue("xd").value();
  const ValueId y = g.AddNodeValue("y").value();
  REQUIRE(g.AddNode(Node{"q", "QuantizeLinear", "", {}, {x, s, z}, {xq}}).ok());
  REQUIRE(g.AddNode(Node{"dq", "DequantizeLinear", "", {}, {xq, s, z}, {xd}}).ok());
  REQUIRE(g.AddNode(Node{"conv", "Conv", "", {}, {xd, w}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  auto report = RecognizeQdqGroups(g);
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(QdqImportOps(g) == std::vector<std::string>{"Quantize", "Dequantize", "Conv"});
  CHECK(report->quantize == 1);
  CHECK(report->dequantize == 1);
  REQUIRE(report->kept_float.size() == 1);
  CHECK(report->kept_float[0] == "'conv' (Conv) stays float: its weight is not a DequantizeLinear of a u8/s8 constant");
  REQUIRE(g.value(g.FindValue("xq")).qparams);
  CHECK(g.value(g.FindValue("xq")).qparams->zero_point() == 3);
  // It runs: x = 0.26 -> code 3 + rne(2.6) = 6 -> 0.3 -> y = 0.6.
  const Tensor in = Tensor::FromValues<float>(Shape{1, 1, 4, 4}, std::vector<float>(16, 0.26f)).value();
  const Tensor out = QdqImportRun(g, QuantizedGraphRegistry(), in);
  CHECK(out.data<float>()[0] == Approx(0.6f));
}

// octet's export (issue 23) writes a reduced range and a fused Relu as a Clip on the u8 codes after the
// QuantizeLinear: x -> Q (scale 0.1, zero point 3) -> Clip(3, 127) -> DQ. The bound 127 (the x86 preset's 7-bit
// range) narrows the Quantize's quant range; the bound 3 (the zero point: a Relu) is a QClamp at 0.
TEST_CASE("QDQ import reads a Clip on the codes after a QuantizeLinear as the quant range and a QClamp",
          "[onnx][qdq_import]") {
  Graph g("code_clip");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{1, 4}).value();
  const ValueId s = g.AddConstant("s", Tensor::FromValues<float>(Shape{}, std::vector<float>{0.1f}).value()).value();
  const ValueId z = g.AddConstant("z", Tensor::FromValues<uint8_t>(Shape{}, std::vector<uint8_t>{3}).value()).value();
  const ValueId lo = g.AddConstant("lo", Tensor::FromValues<uint8_t>(Shape{}, std::vector<uint8_t>{3}).value()).value();
  const ValueId hi =
      g.AddConstant("hi", Tensor::FromValues<uint8_t>(Shape{}, std::vector<uint8_t>{127}).value()).value();
  const ValueId xu = g.AddNodeValue("xu").value();
  const ValueId xq = g.AddNodeValue("xq").value();
  const ValueId y = g.AddNodeValue("y").value();
  REQUIRE(g.AddNode(Node{"q", "QuantizeLinear", "", {}, {x, s, z}, {xu}}).ok());
  REQUIRE(g.AddNode(Node{"clip", "Clip", "", {}, {xu, lo, hi}, {xq}}).ok());
  REQUIRE(g.AddNode(Node{"dq", "DequantizeLinear", "", {}, {xq, s, z}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  auto report = RecognizeQdqGroups(g);
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(QdqImportOps(g) == std::vector<std::string>{"Quantize", "QClamp", "Dequantize"});
  const std::optional<QParams>& q = g.value(g.FindValue("xq")).qparams;
  REQUIRE(q);
  CHECK(q->dtype() == DType::kU8);
  CHECK(q->quant_min() == 0);
  CHECK(q->quant_max() == 127);
  CHECK(q->zero_point() == 3);
  CHECK(g.node(1).attributes.GetFloat("min").value() == 0.0f);
  CHECK_FALSE(g.node(1).attributes.Has("max"));
  // -1 -> code 0 -> clamped to 3 (0.0); 0.5 -> 8; 20 -> 203 -> 127 (the 7-bit range): 12.4.
  const Tensor in = Tensor::FromValues<float>(Shape{1, 4}, std::vector<float>{-1.0f, 0.5f, 20.0f, 0.0f}).value();
  const Tensor out = QdqImportRun(g, QuantizedGraphRegistry(), in);
  CHECK(out.data<float>()[0] == 0.0f);
  CHECK(out.data<float>()[1] == Approx(0.5f));
  CHECK(out.data<float>()[2] == Approx(12.4f));
  CHECK(out.data<float>()[3] == 0.0f);
}

// Other tools' QDQ shapes of a transformer's int8 ops (ONNX Runtime's quantizer at opset 17): MatMul of two
// dequantized activations, LayerNormalization and Softmax between DequantizeLinear and QuantizeLinear. They become
// QBatchMatMul, QLayerNorm (keeping its float Scale and B) and QSoftmax, and run within 1 LSB of the Q/DQ ops run
// as written (float in between).
TEST_CASE("QDQ groups of a MatMul of two activations, LayerNormalization and Softmax import as int8 transformer ops",
          "[onnx][qdq_import]") {
  Graph g("attention");
  auto scalar_f = [&](const char* name, float v) {
    return g.AddConstant(name, Tensor::FromValues<float>(Shape{}, std::vector<float>{v}).value()).value();
  };
  auto scalar_u8 = [&](const char* name, uint8_t v) {
    return g.AddConstant(name, Tensor::FromValues<uint8_t>(Shape{}, std::vector<uint8_t>{v}).value()).value();
  };
  const ValueId a = g.AddInput("a", DType::kF32, Shape{2, 4, 8}).value();
  const ValueId b = g.AddInput("b", DType::kF32, Shape{2, 8, 4}).value();
  const ValueId s_in = scalar_f("s_in", 0.02f), z_in = scalar_u8("z_in", 128);
  const ValueId s_mm = scalar_f("s_mm", 0.05f), z_mm = scalar_u8("z_mm", 120);
  const ValueId s_ln = scalar_f("s_ln", 0.03f), z_ln = scalar_u8("z_ln", 128);
  const ValueId s_sm = scalar_f("s_sm", 1.0f / 256.0f), z_sm = scalar_u8("z_sm", 0);
  std::vector<float> gamma, beta;
  for (int i = 0; i < 8; ++i) {
    gamma.push_back(0.5f + 0.125f * static_cast<float>(i));
    beta.push_back(0.0625f * static_cast<float>(i - 4));
  }
  const ValueId scale = g.AddConstant("gamma", Tensor::FromValues<float>(Shape{8}, gamma).value()).value();
  const ValueId bias = g.AddConstant("beta", Tensor::FromValues<float>(Shape{8}, beta).value()).value();
  auto v = [&](const char* name) { return g.AddNodeValue(name).value(); };
  const ValueId aq = v("aq"), ad = v("ad"), bq = v("bq"), bd = v("bd");
  const ValueId mm = v("mm"), mmq = v("mmq"), y_mm = v("y_mm");
  const ValueId ln = v("ln"), lnq = v("lnq"), y_ln = v("y_ln");
  const ValueId sm = v("sm"), smq = v("smq"), y_sm = v("y_sm");
  REQUIRE(g.AddNode(Node{"qa", "QuantizeLinear", "", {}, {a, s_in, z_in}, {aq}}).ok());
  REQUIRE(g.AddNode(Node{"dqa", "DequantizeLinear", "", {}, {aq, s_in, z_in}, {ad}}).ok());
  REQUIRE(g.AddNode(Node{"qb", "QuantizeLinear", "", {}, {b, s_in, z_in}, {bq}}).ok());
  REQUIRE(g.AddNode(Node{"dqb", "DequantizeLinear", "", {}, {bq, s_in, z_in}, {bd}}).ok());
  REQUIRE(g.AddNode(Node{"matmul", "MatMul", "", {}, {ad, bd}, {mm}}).ok());
  REQUIRE(g.AddNode(Node{"qmm", "QuantizeLinear", "", {}, {mm, s_mm, z_mm}, {mmq}}).ok());
  REQUIRE(g.AddNode(Node{"dqmm", "DequantizeLinear", "", {}, {mmq, s_mm, z_mm}, {y_mm}}).ok());
  AttributeMap ln_attributes;
  ln_attributes.Set("axis", int64_t{-1});
  ln_attributes.Set("epsilon", 1e-5f);
  REQUIRE(g.AddNode(Node{"layernorm", "LayerNormalization", "", ln_attributes, {ad, scale, bias}, {ln}}).ok());
  REQUIRE(g.AddNode(Node{"qln", "QuantizeLinear", "", {}, {ln, s_ln, z_ln}, {lnq}}).ok());
  REQUIRE(g.AddNode(Node{"dqln", "DequantizeLinear", "", {}, {lnq, s_ln, z_ln}, {y_ln}}).ok());
  REQUIRE(g.AddNode(Node{"softmax", "Softmax", "", {}, {ad}, {sm}}).ok());
  REQUIRE(g.AddNode(Node{"qsm", "QuantizeLinear", "", {}, {sm, s_sm, z_sm}, {smq}}).ok());
  REQUIRE(g.AddNode(Node{"dqsm", "DequantizeLinear", "", {}, {smq, s_sm, z_sm}, {y_sm}}).ok());
  for (ValueId y : {y_mm, y_ln, y_sm}) REQUIRE(g.AddOutput(y).ok());
  const Graph as_written = g;

  auto report = RecognizeQdqGroups(g);
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(report->kept_float.empty());
  std::vector<std::string> ops = QdqImportOps(g);
  std::sort(ops.begin(), ops.end());
  CHECK(ops == std::vector<std::string>{"Dequantize", "Dequantize", "Dequantize", "QBatchMatMul", "QLayerNorm",
                                        "QSoftmax", "Quantize", "Quantize"});
  for (const Node& n : g.nodes()) {
    if (n.op_type == "QLayerNorm") CHECK(n.inputs.size() == 3);
  }

  std::vector<float> av, bv;
  for (int i = 0; i < 64; ++i) {
    av.push_back(std::sin(0.37f * static_cast<float>(i)) * 2.0f);
    bv.push_back(std::cos(0.23f * static_cast<float>(i)) * 1.5f);
  }
  const std::vector<Tensor> inputs = {Tensor::FromValues<float>(Shape{2, 4, 8}, av).value(),
                                      Tensor::FromValues<float>(Shape{2, 8, 4}, bv).value()};
  auto run = [&](const Graph& graph, const OpRegistry& registry) {
    const Context context = Context::Create().value();
    auto exec = Executor::Compile(graph, context, registry, CompileOptions{});
    INFO(exec.status().message());
    REQUIRE(exec.ok());
    auto y = exec->Run(inputs);
    INFO(y.status().message());
    REQUIRE(y.ok());
    return *y;
  };
  const std::vector<Tensor> got = run(g, QuantizedGraphRegistry());
  const std::vector<Tensor> want = run(as_written, FloatOpRegistry());
  REQUIRE(got.size() == 3);
  CHECK(QdqImportBeyondOneLsb(got[0], want[0], 0.05f) == 0);
  CHECK(QdqImportBeyondOneLsb(got[1], want[1], 0.03f) == 0);
  CHECK(QdqImportBeyondOneLsb(got[2], want[2], 1.0f / 256.0f) == 0);
}

}  // namespace
}  // namespace octet
