// The QDQ export's dense stems (io/onnx/dense_stem.h): a one-input-channel int8 Conv written as one Gemm over the
// image's pixels, and the import rule that folds it back into the QConv. Checked on digits images: the export's form,
// the round trip (the same QConv, weight and bias back, bit-identical outputs), a hand-made equivalent without the
// mark (stays a QGemm, the same outputs) and a marked Gemm whose weight is not a Conv's (not folded). Whether ONNX
// Runtime fuses the form and runs it within one LSB is checked by tests/onnx/ort_qdq/ (outside this binary).
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/op_table.h"
#include "io/onnx/dense_stem.h"
#include "io/onnx/onnx_importer.h"
#include "io/onnx/qdq_export.h"
#include "quant/quantized_registry.h"
#include "tests/test_util.h"

namespace octet {
namespace {

struct StemShape {
  int64_t channels, kh, kw;
  std::vector<int64_t> strides, pads;
  bool per_channel, bias;
};

// image [N, 1, 8, 8] -> Quantize (u8) -> QConv + Relu (s8 weights drawn at random, s32 bias) -> Dequantize -> out.
Graph StemGraph(const StemShape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> code(-127, 127);
  Graph g("stem");
  const ValueId x = g.AddInput("image", DType::kF32, Shape{kUnknownDim, 1, 8, 8}).value();
  const ValueId xq = g.AddNodeValue("image.q", DType::kU8).value();
  g.mutable_value(xq).qparams = QParams::PerTensor(DType::kU8, 16.0f / 255.0f, 0).value();
  Tensor wt = Tensor::Create(DType::kS8, Shape{s.channels, 1, s.kh, s.kw}).value();
  for (int64_t i = 0; i < wt.NumElements(); ++i) wt.data<int8_t>()[i] = static_cast<int8_t>(code(rng));
  const ValueId w = g.AddConstant("stem.weight", std::move(wt)).value();
  std::vector<float> ws;
  for (int64_t c = 0; c < s.channels; ++c) ws.push_back(0.004f + 0.001f * static_cast<float>(c));
  // Symmetric, as octet's Convert makes weights and biases (what an ONNX zero point 0 imports as).
  g.mutable_value(w).qparams =
      s.per_channel ? QParams::Create(QScheme::kPerChannelSymmetric, DType::kS8, -128, 127, ws,
                                      std::vector<int32_t>(ws.size(), 0), 0)
                          .value()
                    : QParams::Create(QScheme::kPerTensorSymmetric, DType::kS8, -128, 127, {0.005f}, {0}, 0).value();
  std::vector<ValueId> inputs = {xq, w};
  if (s.bias) {
    Tensor bt = Tensor::Create(DType::kS32, Shape{s.channels}).value();
    for (int64_t c = 0; c < s.channels; ++c) bt.data<int32_t>()[c] = code(rng) * 20;
    const ValueId b = g.AddConstant("stem.bias", std::move(bt)).value();
    std::vector<float> bs;
    for (int64_t c = 0; c < s.channels; ++c) bs.push_back((16.0f / 255.0f) * (s.per_channel ? ws[c] : 0.005f));
    g.mutable_value(b).qparams = QParams::Create(QScheme::kPerChannelSymmetric, DType::kS32, INT32_MIN, INT32_MAX, bs,
                                                 std::vector<int32_t>(bs.size(), 0), 0)
                                     .value();
    inputs.push_back(b);
  }
  const ValueId y = g.AddNodeValue("stem.out", DType::kU8).value();
  g.mutable_value(y).qparams = QParams::PerTensor(DType::kU8, 0.03f, 0).value();
  const ValueId out = g.AddNodeValue("out").value();
  REQUIRE(g.AddNode(Node{"image.quantize", "Quantize", "octet", {}, {x}, {xq}}).ok());
  REQUIRE(g.AddNode(Node{"stem",
                         "QConv",
                         "octet",
                         {{"kernel_shape", std::vector<int64_t>{s.kh, s.kw}},
                          {"strides", s.strides},
                          {"pads", s.pads},
                          {"activation", "Relu"},
                          {"requantization", "fp32"}},
                         inputs,
                         {y}})
              .ok());
  REQUIRE(g.AddNode(Node{"out.dequantize", "Dequantize", "octet", {}, {y}, {out}}).ok());
  REQUIRE(g.AddOutput(out).ok());
  return g;
}

Graph Import(const std::string& bytes) {
  auto g = ImportOnnxModel(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), "stem");
  INFO(g.status().message());
  REQUIRE(g.ok());
  return std::move(*g);
}

Tensor Run(const Graph& g, const Tensor& x) {
  return testing::RunWithInputShapes(g, Context::Create().value(), QuantizedGraphRegistry(), {x})[0];
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.SizeBytes()) == 0;
}

onnx::NodeProto* FindOp(onnx::ModelProto& m, const std::string& op) {
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() == op) return &n;
  }
  return nullptr;
}

int CountOps(const Graph& g, std::string_view op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

TEST_CASE("The dense stem's name mark carries the Conv's geometry and nothing else parses", "[onnx][qdq]") {
  DenseStem s;
  s.height = 8, s.width = 7, s.kernel_h = 3, s.kernel_w = 2, s.stride_h = 2, s.stride_w = 1;
  s.pad_top = 1, s.pad_left = 0, s.pad_bottom = 2, s.pad_right = 1;
  const std::string name = DenseStemName("/cnn/conv1/Conv", s);
  CHECK(name == "/cnn/conv1/Conv.octet_dense_stem_1x8x7_k3x2_s2x1_p1x0x2x1");
  std::string conv;
  const std::optional<DenseStem> back = ParseDenseStemName(name, &conv);
  REQUIRE(back.has_value());
  CHECK(conv == "/cnn/conv1/Conv");
  CHECK(back->OutH() == 5);
  CHECK(back->OutW() == 7);
  // Trailing text, a leading zero, a zero stride, a kernel larger than the padded image, two input channels.
  for (const char* bad :
       {"conv", "conv.octet_dense_stem_1x8x8_k3x3_s1x1_p1x1x1x1x", "conv.octet_dense_stem_1x08x8_k3x3_s1x1_p1x1x1x1",
        "conv.octet_dense_stem_1x8x8_k3x3_s0x1_p1x1x1x1", "conv.octet_dense_stem_1x2x2_k3x3_s1x1_p0x0x0x0",
        "conv.octet_dense_stem_2x8x8_k3x3_s1x1_p1x1x1x1"}) {
    INFO(bad);
    CHECK_FALSE(ParseDenseStemName(bad, nullptr).has_value());
  }
}

TEST_CASE("A one-input-channel QConv exports as one Gemm and imports back as the same QConv, bit for bit",
          "[onnx][qdq]") {
  // The digits CNN's stem; an uneven kernel, strides and pads with per-tensor weights; no bias and no padding.
  const StemShape shapes[] = {{8, 3, 3, {1, 1}, {1, 1, 1, 1}, true, true},
                              {5, 2, 3, {2, 1}, {0, 1, 1, 0}, false, true},
                              {3, 3, 3, {2, 2}, {0, 0, 0, 0}, true, false}};
  const StemShape& shape = shapes[GENERATE(0, 1, 2)];
  INFO("kernel " << shape.kh << "x" << shape.kw << ", " << shape.channels << " channels");
  const Graph g = StemGraph(shape, 0x5eed + static_cast<uint64_t>(shape.kw * 10 + shape.channels));
  const Tensor x = testing::DigitsImages("digits_test_x.npy", true);
  const Tensor want = Run(g, x);

  auto bytes = ExportQdqModel(g);
  REQUIRE(bytes.ok());
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(*bytes));
  CHECK(FindOp(m, "Conv") == nullptr);
  onnx::NodeProto* gemm = FindOp(m, "Gemm");
  REQUIRE(gemm != nullptr);
  CHECK(ParseDenseStemName(gemm->name(), nullptr).has_value());

  // Off: the Conv form.
  QdqExportOptions off;
  off.dense_stems = false;
  auto conv_bytes = ExportQdqModel(g, off);
  REQUIRE(conv_bytes.ok());
  onnx::ModelProto mc;
  REQUIRE(mc.ParseFromString(*conv_bytes));
  CHECK(FindOp(mc, "Conv") != nullptr);
  CHECK(FindOp(mc, "Gemm") == nullptr);

  // The round trip: the QConv under its name with its weight and bias, and the same output bytes.
  const Graph back = Import(*bytes);
  REQUIRE(CountOps(back, "QConv") == 1);
  CHECK(CountOps(back, "QGemm") == 0);
  CHECK(CountOps(back, "Reshape") == 0);
  CHECK(CountOps(back, "Transpose") == 0);
  const Node& conv = back.node(back.FindNode("stem"));
  CHECK(conv.op_type == "QConv");
  const Node& orig = g.node(g.FindNode("stem"));
  REQUIRE(conv.inputs.size() == orig.inputs.size());
  for (size_t k = 1; k < conv.inputs.size(); ++k) {
    const Value& a = back.value(conv.inputs[k]);
    const Value& b = g.value(orig.inputs[k]);
    CHECK(a.name == b.name);
    CHECK(SameBytes(a.data, b.data));
    REQUIRE(a.qparams.has_value());
    CHECK(a.qparams->ToString() == b.qparams->ToString());
  }
  CHECK(back.value(conv.outputs[0]).qparams->ToString() == g.value(orig.outputs[0]).qparams->ToString());
  CHECK(SameBytes(Run(back, x), want));
  const Graph back_conv = Import(*conv_bytes);
  CHECK(SameBytes(Run(back_conv, x), want));

  SECTION("without the mark (a hand-made equivalent) it stays a QGemm, with the same outputs") {
    gemm->set_name("hand_made_gemm");
    std::string unmarked;
    REQUIRE(m.SerializeToString(&unmarked));
    const Graph hand = Import(unmarked);
    CHECK(CountOps(hand, "QConv") == 0);
    CHECK(CountOps(hand, "QGemm") == 1);
    CHECK(SameBytes(Run(hand, x), want));
  }
  SECTION("a marked Gemm whose weight is not a Conv's dense form is not folded") {
    onnx::TensorProto* w = nullptr;
    for (auto& t : *m.mutable_graph()->mutable_initializer()) {
      if (t.name() == "stem.weight") w = &t;
    }
    REQUIRE(w != nullptr);
    std::string raw = w->raw_data();
    // Column 63 (the last pixel) is no tap of row 0 (output pixel (0, 0)) for any of these kernels.
    raw[63] = 5;
    w->set_raw_data(raw);
    std::string tampered;
    REQUIRE(m.SerializeToString(&tampered));
    const Graph t = Import(tampered);
    CHECK(CountOps(t, "QConv") == 0);
    CHECK(CountOps(t, "QGemm") == 1);
  }
}

TEST_CASE("A dense stem's 7-bit Clip moves after the MaxPool reading it and comes back at import", "[onnx][qdq]") {
  // The x86 / fbgemm form: the stem's codes in [0, 127] (a Clip on the codes in QDQ), then QMaxPool.
  Graph g = StemGraph({8, 3, 3, {1, 1}, {1, 1, 1, 1}, true, true}, 11);
  const ValueId y = g.FindValue("stem.out");
  g.mutable_value(y).qparams = QParams::PerTensor(DType::kU8, 0.03f, 0, 0, 127).value();
  const ValueId pooled = g.AddNodeValue("pool.out", DType::kU8).value();
  g.mutable_value(pooled).qparams = g.value(y).qparams;
  Node& dequantize = g.mutable_node(g.FindNode("out.dequantize"));
  dequantize.inputs[0] = pooled;
  REQUIRE(g.AddNode(Node{"pool",
                         "QMaxPool",
                         "octet",
                         {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
                         {y},
                         {pooled}})
              .ok());
  REQUIRE(g.SortTopologically().ok());
  const Tensor x = testing::DigitsImages("digits_test_x.npy", true);
  const Tensor want = Run(g, x);

  auto bytes = ExportQdqModel(g);
  REQUIRE(bytes.ok());
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(*bytes));
  // One Clip, after the MaxPool's QuantizeLinear, writing the pooled codes; the Gemm's codes go unclipped.
  int clips = 0;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "Clip") continue;
    ++clips;
    CHECK(n.output(0) == "pool.out");
  }
  CHECK(clips == 1);
  const Graph back = Import(*bytes);
  REQUIRE(CountOps(back, "QConv") == 1);
  CHECK(CountOps(back, "QMaxPool") == 1);
  CHECK(back.value(back.FindValue("stem.out")).qparams->ToString() == g.value(y).qparams->ToString());
  CHECK(back.value(back.FindValue("pool.out")).qparams->ToString() == g.value(pooled).qparams->ToString());
  CHECK(SameBytes(Run(back, x), want));
}

TEST_CASE("Convs that do not fit the dense stem rule keep the Conv form", "[onnx][qdq]") {
  // Two input channels: no dense stem (the rule is one input channel).
  StemShape s{4, 3, 3, {1, 1}, {1, 1, 1, 1}, true, true};
  Graph g = StemGraph(s, 7);
  Tensor wide = Tensor::Create(DType::kS8, Shape{4, 2, 3, 3}).value();
  std::memset(wide.raw_data(), 1, wide.SizeBytes());
  const ValueId w = g.node(g.FindNode("stem")).inputs[1];
  g.mutable_value(w).data = wide;
  g.mutable_value(w).shape = wide.shape();
  g.mutable_value(g.inputs()[0]).shape = Shape{kUnknownDim, 2, 8, 8};
  auto bytes = ExportQdqModel(g);
  REQUIRE(bytes.ok());
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(*bytes));
  CHECK(FindOp(m, "Conv") != nullptr);
  CHECK(FindOp(m, "Gemm") == nullptr);

  // Over kDenseStemMaxBytes: 64 output channels on 8x8 with pads 1 is 64 * 64 * 64 = 256 KiB.
  StemShape big{64, 3, 3, {1, 1}, {1, 1, 1, 1}, true, true};
  REQUIRE(64 * 64 * 64 > kDenseStemMaxBytes);
  auto big_bytes = ExportQdqModel(StemGraph(big, 8));
  REQUIRE(big_bytes.ok());
  onnx::ModelProto mb;
  REQUIRE(mb.ParseFromString(*big_bytes));
  CHECK(FindOp(mb, "Conv") != nullptr);
  CHECK(FindOp(mb, "Gemm") == nullptr);
}

}  // namespace
}  // namespace octet
