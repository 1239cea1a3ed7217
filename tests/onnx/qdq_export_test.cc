// ONNX QDQ export of a hand-built int8 graph: the nodes, initializers, types and shapes it writes, and its errors.
// Whether ONNX Runtime runs the result to within one LSB of octet is checked by tests/onnx/ort_qdq/ (outside this
// binary); with OCTET_QDQ_EXPORT_DIR set, the exports are also written there for ONNX's checker (the onnx_checker
// ctest, tests/onnx/onnx_checker_test.sh).
#include <catch2/catch.hpp>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/graph.h"
#include "io/file_util.h"
#include "io/onnx/qdq_export.h"

namespace octet {
namespace {

Tensor Filled(DType dtype, Shape shape) {
  Tensor t = Tensor::Create(dtype, std::move(shape)).value();
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (dtype == DType::kS8) t.data<int8_t>()[i] = static_cast<int8_t>(i % 11 - 5);
    if (dtype == DType::kS32) t.data<int32_t>()[i] = static_cast<int32_t>(i * 7 - 3);
    if (dtype == DType::kF32) t.data<float>()[i] = 0.25f * static_cast<float>(i);
  }
  return t;
}

ValueId Int8Value(Graph& g, const std::string& name, DType dtype, float scale, int32_t zp, int64_t qmin = -1,
                  int64_t qmax = -1) {
  const ValueId id = g.AddNodeValue(name, dtype).value();
  g.mutable_value(id).qparams = qmin < 0 && qmax < 0 ? QParams::PerTensor(dtype, scale, zp).value()
                                                     : QParams::PerTensor(dtype, scale, zp, qmin, qmax).value();
  return id;
}

// image -> Quantize (u8, reduce_range [0, 127]) -> QConv + Relu (per-channel s8 weights, s32 bias) -> QMaxPool ->
// Flatten (on u8) -> QGemm (transB, float bias as pytorch-fbgemm keeps it) -> Dequantize -> logits.
Graph SmallInt8Graph() {
  Graph g("small_int8");
  const ValueId x = g.AddInput("image", DType::kF32, Shape{kUnknownDim, 2, 6, 6}).value();
  const ValueId xq = Int8Value(g, "image.q", DType::kU8, 0.05f, 10, 0, 127);
  const ValueId w = g.AddConstant("conv.weight", Filled(DType::kS8, Shape{3, 2, 3, 3})).value();
  g.mutable_value(w).qparams = QParams::PerChannel(DType::kS8, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0, -128, 127).value();
  const ValueId b = g.AddConstant("conv.bias", Filled(DType::kS32, Shape{3})).value();
  g.mutable_value(b).qparams =
      QParams::PerChannel(DType::kS32, {0.005f, 0.01f, 0.015f}, {0, 0, 0}, 0, INT32_MIN, INT32_MAX).value();
  const ValueId y = Int8Value(g, "conv.out", DType::kU8, 0.1f, 0);
  const ValueId p = Int8Value(g, "pool.out", DType::kU8, 0.1f, 0);
  const ValueId f = Int8Value(g, "flat", DType::kU8, 0.1f, 0);
  const ValueId gw = g.AddConstant("fc.weight", Filled(DType::kS8, Shape{4, 12})).value();
  g.mutable_value(gw).qparams = QParams::PerTensor(DType::kS8, 0.02f, 0).value();
  const ValueId gb = g.AddConstant("fc.bias", Filled(DType::kF32, Shape{4})).value();
  const ValueId gq = Int8Value(g, "fc.out", DType::kS8, 0.3f, -3);
  const ValueId logits = g.AddNodeValue("logits").value();
  REQUIRE(g.AddNode(Node{"image.quantize", "Quantize", "octet", {}, {x}, {xq}}).ok());
  REQUIRE(g.AddNode(Node{"conv",
                         "QConv",
                         "octet",
                         {{"kernel_shape", std::vector<int64_t>{3, 3}},
                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                          {"activation", "Relu"},
                          {"requantization", "fp32"}},
                         {xq, w, b},
                         {y}})
              .ok());
  REQUIRE(g.AddNode(Node{"pool", "QMaxPool", "octet", {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                        {"strides", std::vector<int64_t>{3, 3}}},
                         {y}, {p}})
              .ok());
  REQUIRE(g.AddNode(Node{"flatten", "Flatten", "", {{"axis", 1}}, {p}, {f}}).ok());
  REQUIRE(g.AddNode(Node{"fc", "QGemm", "octet", {{"transB", 1}, {"requantization", "fbgemm"}}, {f, gw, gb}, {gq}})
              .ok());
  REQUIRE(g.AddNode(Node{"logits.dequantize", "Dequantize", "octet", {}, {gq}, {logits}}).ok());
  REQUIRE(g.AddOutput(logits).ok());
  return g;
}

// ExportQdqModel, which must succeed; the file also goes to $OCTET_QDQ_EXPORT_DIR/NAME.onnx when that is set.
std::string Export(const Graph& g, const std::string& name, const QdqExportOptions& options = {}) {
  auto bytes = ExportQdqModel(g, options);
  REQUIRE(bytes.ok());
  if (const char* dir = std::getenv("OCTET_QDQ_EXPORT_DIR"); dir != nullptr && *dir != '\0') {
    REQUIRE(WriteFileAtomically(std::string(dir) + "/" + name + ".onnx", *bytes).ok());
  }
  return *bytes;
}

std::string DimString(const onnx::TensorShapeProto::Dimension& d) {
  return d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param();
}

onnx::ModelProto ParseModelProto(const std::string& bytes) {
  onnx::ModelProto model;
  REQUIRE(model.ParseFromString(bytes));
  return model;
}

std::vector<std::string> OpTypes(const onnx::GraphProto& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.node()) ops.push_back(n.op_type());
  return ops;
}

const onnx::TensorProto* Initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

const onnx::NodeProto* NodeProducing(const onnx::GraphProto& g, const std::string& value) {
  for (const auto& n : g.node()) {
    for (const auto& out : n.output()) {
      if (out == value) return &n;
    }
  }
  return nullptr;
}

TEST_CASE("QDQ export writes int8 operators as DequantizeLinear, the float operator and QuantizeLinear",
          "[onnx][qdq]") {
  const Graph g = SmallInt8Graph();
  const onnx::ModelProto model = ParseModelProto(Export(g, "small_int8"));
  REQUIRE(model.opset_import_size() == 1);
  CHECK(model.opset_import(0).version() == 13);
  const onnx::GraphProto& graph = model.graph();
  // The reduced range [0, 127] of image.q is a Clip on its u8 codes after QuantizeLinear; the conv's fused Relu
  // (zero point 0) is the u8 QuantizeLinear's own saturation, and the MaxPool keeps its input's codes: no node of
  // their own, so ONNX Runtime fuses DequantizeLinear -> Conv -> QuantizeLinear into QLinearConv.
  CHECK(OpTypes(graph) == std::vector<std::string>{"QuantizeLinear", "Clip", "DequantizeLinear", "DequantizeLinear",
                                                   "DequantizeLinear", "Conv", "QuantizeLinear", "DequantizeLinear",
                                                   "MaxPool", "QuantizeLinear", "Flatten", "DequantizeLinear",
                                                   "DequantizeLinear", "Gemm", "QuantizeLinear", "DequantizeLinear"});
  const onnx::NodeProto* image_clip = NodeProducing(graph, "image.q");
  REQUIRE(image_clip != nullptr);
  CHECK(image_clip->op_type() == "Clip");
  REQUIRE(image_clip->input_size() == 3);
  for (const auto& [input, code] : {std::pair<int, char>{1, 0}, {2, 127}}) {
    const onnx::TensorProto* bound = Initializer(graph, image_clip->input(input));
    REQUIRE(bound != nullptr);
    CHECK(bound->data_type() == onnx::TensorProto::UINT8);
    CHECK(bound->raw_data() == std::string(1, code));
  }
  // Integer values keep their names and types: the conv's output is produced by a QuantizeLinear, Flatten reads
  // the u8 pool output directly.
  const onnx::NodeProto* conv_q = NodeProducing(graph, "conv.out");
  REQUIRE(conv_q != nullptr);
  CHECK(conv_q->op_type() == "QuantizeLinear");
  const onnx::NodeProto* flatten = NodeProducing(graph, "flat");
  REQUIRE(flatten != nullptr);
  CHECK(flatten->op_type() == "Flatten");
  CHECK(flatten->input(0) == "pool.out");
  // Weights: s8 initializers, per-axis scales for the conv (axis 0), zero points of the weight's type.
  const onnx::TensorProto* w = Initializer(graph, "conv.weight");
  REQUIRE(w != nullptr);
  CHECK(w->data_type() == onnx::TensorProto::INT8);
  CHECK(w->raw_data().size() == 3 * 2 * 3 * 3);
  const onnx::TensorProto* w_scale = Initializer(graph, "conv.weight.scale");
  REQUIRE(w_scale != nullptr);
  CHECK(w_scale->dims_size() == 1);
  CHECK(w_scale->dims(0) == 3);
  const onnx::NodeProto* w_dq = NodeProducing(graph, "conv.weight.dequantized");
  REQUIRE(w_dq != nullptr);
  REQUIRE(w_dq->attribute_size() == 1);
  CHECK(w_dq->attribute(0).name() == "axis");
  CHECK(w_dq->attribute(0).i() == 0);
  // The s32 bias is dequantized with its own scales; the float bias of the fbgemm-style Gemm is used directly.
  const onnx::TensorProto* b = Initializer(graph, "conv.bias");
  REQUIRE(b != nullptr);
  CHECK(b->data_type() == onnx::TensorProto::INT32);
  const onnx::NodeProto* gemm = NodeProducing(graph, "fc.out.float");
  REQUIRE(gemm != nullptr);
  CHECK(gemm->input(2) == "fc.bias");
  REQUIRE(gemm->attribute_size() == 1);  // transB; octet's requantization attribute is dropped
  CHECK(gemm->attribute(0).name() == "transB");
  // The graph keeps its input (with a symbolic batch) and output names and float types.
  REQUIRE(graph.input_size() == 1);
  CHECK(graph.input(0).name() == "image");
  CHECK(graph.input(0).type().tensor_type().shape().dim(0).dim_param() == "image_dim0");
  REQUIRE(graph.output_size() == 1);
  CHECK(graph.output(0).name() == "logits");
  CHECK(graph.output(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);
  // The output's shape (ONNX's checker requires one): [batch, 4], the batch symbolic as in the input.
  const onnx::TensorShapeProto& logits_shape = graph.output(0).type().tensor_type().shape();
  REQUIRE(logits_shape.dim_size() == 2);
  CHECK(logits_shape.dim(0).has_dim_param());
  CHECK_FALSE(logits_shape.dim(0).dim_param().empty());
  CHECK(logits_shape.dim(1).has_dim_value());
  CHECK(logits_shape.dim(1).dim_value() == 4);
  // Only the interface is declared: no value infos of intermediate tensors.
  CHECK(graph.value_info_size() == 0);
  const onnx::TensorProto* zp = Initializer(graph, "image.q.zero_point");
  REQUIRE(zp != nullptr);
  CHECK(zp->data_type() == onnx::TensorProto::UINT8);
  CHECK(zp->raw_data() == std::string(1, '\x0a'));
  // The s8 output of the fc goes out as u8 with zero point -3 + 128 (ONNX Runtime's x86 int8 kernels want u8).
  const onnx::TensorProto* fc_zp = Initializer(graph, "fc.out.zero_point");
  REQUIRE(fc_zp != nullptr);
  CHECK(fc_zp->data_type() == onnx::TensorProto::UINT8);
  CHECK(fc_zp->raw_data() == std::string(1, static_cast<char>(125)));
}

// The bounds of the integer Clip that follows `value`'s QuantizeLinear, or {} when there is none.
std::vector<int> ClipCodes(const onnx::GraphProto& graph, const std::string& value) {
  const onnx::NodeProto* clip = NodeProducing(graph, value);
  if (clip == nullptr || clip->op_type() != "Clip") return {};
  std::vector<int> codes;
  for (int i = 1; i < clip->input_size(); ++i) {
    const onnx::TensorProto* bound = Initializer(graph, clip->input(i));
    REQUIRE(bound != nullptr);
    REQUIRE(bound->raw_data().size() == 1);
    const char c = bound->raw_data()[0];
    codes.push_back(bound->data_type() == onnx::TensorProto::UINT8 ? static_cast<uint8_t>(c) : static_cast<int8_t>(c));
  }
  return codes;
}

TEST_CASE("QDQ export bounds fused activations and narrow ranges by a Clip on the integer codes", "[onnx][qdq]") {
  // Relu with zero point 10: codes from 10 up; the [0, 127] range of an x86-style output caps them at 127.
  Graph g = SmallInt8Graph();
  g.mutable_value(g.FindValue("conv.out")).qparams = QParams::PerTensor(DType::kU8, 0.1f, 10, 0, 127).value();
  g.mutable_value(g.FindValue("pool.out")).qparams = QParams::PerTensor(DType::kU8, 0.1f, 10, 0, 127).value();
  // The plain form (dense_stems off: no Clip moved after a MaxPool; `octet quantize --no-dense-stem`).
  QdqExportOptions plain;
  plain.dense_stems = false;
  onnx::ModelProto model = ParseModelProto(Export(g, "small_int8_relu_zp10_plain", plain));
  CHECK(ClipCodes(model.graph(), "conv.out") == std::vector<int>{10, 127});
  CHECK(NodeProducing(model.graph(), "conv.out.unclipped")->op_type() == "QuantizeLinear");
  // The MaxPool reads codes in [0, 127] with its output's qparams: nothing to clip.
  CHECK(NodeProducing(model.graph(), "pool.out")->op_type() == "QuantizeLinear");
  // By default the Clip moves after the MaxPool, the only reader of the conv's codes (clamp and max commute), so
  // that ONNX Runtime runs its NHWC MaxPool right after QLinearConv.
  model = ParseModelProto(Export(g, "small_int8_relu_zp10"));
  CHECK(NodeProducing(model.graph(), "conv.out")->op_type() == "QuantizeLinear");
  CHECK(ClipCodes(model.graph(), "pool.out") == std::vector<int>{10, 127});

  // A fused Clip(0, 6) (ReLU6) with scale 0.1, zero point 10: codes 10 .. 70.
  g = SmallInt8Graph();
  g.mutable_value(g.FindValue("conv.out")).qparams = QParams::PerTensor(DType::kU8, 0.1f, 10).value();
  g.mutable_value(g.FindValue("pool.out")).qparams = QParams::PerTensor(DType::kU8, 0.1f, 10).value();
  Node& conv = g.mutable_node(1);
  conv.attributes.Set("activation", Attribute(std::string("Clip")));
  conv.attributes.Set("activation_min", Attribute(0.0f));
  conv.attributes.Set("activation_max", Attribute(6.0f));
  model = ParseModelProto(Export(g, "small_int8_relu6", plain));
  CHECK(ClipCodes(model.graph(), "conv.out") == std::vector<int>{10, 70});
  for (const auto& n : model.graph().node()) CHECK(n.op_type() != "Relu");

  // s8 activations of the symmetric preset ([-127, 127], zero point 0) through Flatten: u8 codes 1 .. 255 with
  // zero point 128, on both sides of the Flatten, whose input and output share one type.
  g = SmallInt8Graph();
  for (const char* name : {"pool.out", "flat"}) {
    g.mutable_value(g.FindValue(name)).qparams = QParams::PerTensor(DType::kS8, 0.1f, 0, -127, 127).value();
    g.mutable_value(g.FindValue(name)).dtype = DType::kS8;
  }
  g.mutable_value(g.FindValue("conv.out")).qparams = QParams::PerTensor(DType::kS8, 0.1f, 0, -127, 127).value();
  g.mutable_value(g.FindValue("conv.out")).dtype = DType::kS8;
  g.mutable_node(1).attributes.Erase("activation");
  model = ParseModelProto(Export(g, "small_int8_symmetric", plain));
  CHECK(ClipCodes(model.graph(), "conv.out") == std::vector<int>{1, 255});
  CHECK(NodeProducing(model.graph(), "pool.out")->op_type() == "QuantizeLinear");
  const onnx::TensorProto* flat_zp = Initializer(model.graph(), "flat.zero_point");
  REQUIRE(flat_zp != nullptr);
  CHECK(flat_zp->data_type() == onnx::TensorProto::UINT8);
  CHECK(flat_zp->raw_data() == std::string(1, static_cast<char>(128)));
}

TEST_CASE("QDQ export can list the integer tensors behind the outputs", "[onnx][qdq]") {
  QdqExportOptions options;
  options.expose_quantized_outputs = true;
  const onnx::ModelProto model = ParseModelProto(Export(SmallInt8Graph(), "small_int8_quantized_outputs", options));
  REQUIRE(model.graph().output_size() == 2);
  CHECK(model.graph().output(1).name() == "fc.out");
  CHECK(model.graph().output(1).type().tensor_type().elem_type() == onnx::TensorProto::INT8);
  const onnx::TensorShapeProto& shape = model.graph().output(1).type().tensor_type().shape();
  REQUIRE(shape.dim_size() == 2);
  CHECK(DimString(shape.dim(1)) == "4");
}

TEST_CASE("QDQ export gives outputs fixed shapes when the inputs have them", "[onnx][qdq]") {
  Graph g = SmallInt8Graph();
  g.mutable_value(g.FindValue("image")).shape = Shape{5, 2, 6, 6};
  const onnx::ModelProto model = ParseModelProto(Export(g, "small_int8_fixed_batch"));
  CHECK(DimString(model.graph().input(0).type().tensor_type().shape().dim(0)) == "5");
  const onnx::TensorShapeProto& shape = model.graph().output(0).type().tensor_type().shape();
  REQUIRE(shape.dim_size() == 2);
  CHECK(DimString(shape.dim(0)) == "5");
  CHECK(DimString(shape.dim(1)) == "4");
}

TEST_CASE("QDQ export: which nodes ONNX Runtime's int8 kernels saturate on without VNNI", "[onnx][qdq]") {
  // SmallInt8Graph's conv reads 7-bit u8 activations ([0, 127]), its fc full-range u8 ones.
  Graph g = SmallInt8Graph();
  CHECK(NodesSaturatingWithoutVnni(g) == std::vector<std::string>{"fc"});
  {
    // 7-bit weights ([-64, 63], the x86 preset) under the full-range activations: none; [-65, 63] is one too many.
    Graph h = SmallInt8Graph();
    h.mutable_value(h.FindValue("fc.weight")).qparams = QParams::PerTensor(DType::kS8, 0.02f, 0, -64, 63).value();
    CHECK(NodesSaturatingWithoutVnni(h).empty());
    h.mutable_value(h.FindValue("fc.weight")).qparams = QParams::PerTensor(DType::kS8, 0.02f, 0, -65, 63).value();
    CHECK(NodesSaturatingWithoutVnni(h) == std::vector<std::string>{"fc"});
  }
  // 7-bit everywhere: none.
  g.mutable_value(g.FindValue("flat")).qparams = QParams::PerTensor(DType::kU8, 0.1f, 0, 0, 127).value();
  CHECK(NodesSaturatingWithoutVnni(g).empty());
  // s8 activations: the conv too, whatever their range.
  g.mutable_value(g.FindValue("image.q")).qparams = QParams::PerTensor(DType::kS8, 0.05f, 0, -64, 63).value();
  CHECK(NodesSaturatingWithoutVnni(g) == std::vector<std::string>{"conv"});
}

TEST_CASE("QDQ export names the node it cannot write", "[onnx][qdq]") {
  Graph g = SmallInt8Graph();
  g.mutable_node(4).op_type = "QSomethingNew";
  auto bytes = ExportQdqModel(g);
  REQUIRE_FALSE(bytes.ok());
  CHECK_THAT(bytes.status().message(), Catch::Contains("'fc' (octet.QSomethingNew)"));
  CHECK_THAT(bytes.status().message(), Catch::Contains("no QDQ form"));

  Graph no_qparams = SmallInt8Graph();
  no_qparams.mutable_value(no_qparams.FindValue("pool.out")).qparams.reset();
  bytes = ExportQdqModel(no_qparams);
  REQUIRE_FALSE(bytes.ok());
  CHECK_THAT(bytes.status().message(), Catch::Contains("value 'pool.out' is used as an integer tensor but has no qparams"));
}

TEST_CASE("QDQ export writes a QClamp as a Clip on the integer codes", "[onnx][qdq]") {
  // x -> Quantize (u8, scale 0.1, zero point 10) -> QClamp(0, 6) -> Dequantize -> y. With the input's qparams the
  // Clip reads the input's codes (10 .. 70); with others (scale 0.05, zero point 0) it follows a requantization
  // (DequantizeLinear, QuantizeLinear) and clips to 0 .. 120.
  for (const bool same : {true, false}) {
    Graph g("clamp");
    const ValueId x = g.AddInput("x", DType::kF32, Shape{1, 8}).value();
    const ValueId xq = Int8Value(g, "x.q", DType::kU8, 0.1f, 10);
    const ValueId yq = same ? Int8Value(g, "y.q", DType::kU8, 0.1f, 10) : Int8Value(g, "y.q", DType::kU8, 0.05f, 0);
    const ValueId y = g.AddNodeValue("y").value();
    REQUIRE(g.AddNode(Node{"x.quantize", "Quantize", "octet", {}, {x}, {xq}}).ok());
    REQUIRE(g.AddNode(Node{"relu6", "QClamp", "octet", {{"min", 0.0f}, {"max", 6.0f}}, {xq}, {yq}}).ok());
    REQUIRE(g.AddNode(Node{"y.dequantize", "Dequantize", "octet", {}, {yq}, {y}}).ok());
    REQUIRE(g.AddOutput(y).ok());
    const onnx::ModelProto model = ParseModelProto(Export(g, same ? "clamp_same_qparams" : "clamp_requantized"));
    CHECK(ClipCodes(model.graph(), "y.q") == (same ? std::vector<int>{10, 70} : std::vector<int>{0, 120}));
    const onnx::NodeProto* clip = NodeProducing(model.graph(), "y.q");
    REQUIRE(clip != nullptr);
    CHECK(NodeProducing(model.graph(), clip->input(0))->op_type() == "QuantizeLinear");
    CHECK(OpTypes(model.graph()) == (same ? std::vector<std::string>{"QuantizeLinear", "Clip", "DequantizeLinear"}
                                          : std::vector<std::string>{"QuantizeLinear", "DequantizeLinear",
                                                                     "QuantizeLinear", "Clip", "DequantizeLinear"}));
  }
}

TEST_CASE("QDQ export writes opset 17 when a float LayerNormalization stays", "[onnx][qdq]") {
  for (const bool layer_norm : {false, true}) {
    Graph g("norm");
    const ValueId x = g.AddInput("x", DType::kF32, Shape{2, 4}).value();
    Tensor ones = Tensor::Create(DType::kF32, Shape{4}).value();
    for (int i = 0; i < 4; ++i) ones.data<float>()[i] = 1.0f;
    const ValueId scale = g.AddConstant("scale", ones).value();
    const ValueId y = g.AddNodeValue("y").value();
    if (layer_norm) {
      REQUIRE(g.AddNode(Node{"norm", "LayerNormalization", "", {{"axis", -1}}, {x, scale}, {y}}).ok());
    } else {
      REQUIRE(g.AddNode(Node{"mul", "Mul", "", {}, {x, scale}, {y}}).ok());
    }
    REQUIRE(g.AddOutput(y).ok());
    const onnx::ModelProto model = ParseModelProto(Export(g, layer_norm ? "layer_norm_opset17" : "mul_opset13"));
    REQUIRE(model.opset_import_size() == 1);
    CHECK(model.opset_import(0).version() == (layer_norm ? 17 : 13));
    CHECK(model.ir_version() == (layer_norm ? 8 : 7));
  }
}

TEST_CASE("QDQ export writes Reshape in its opset-13 form", "[onnx][qdq]") {
  // allowzero (opset 14) = 0 is opset 13's behaviour and is left out; = 1 has no opset-13 form.
  for (const int64_t allowzero : {0, 1}) {
    Graph g("reshape");
    const ValueId x = g.AddInput("x", DType::kF32, Shape{2, 3}).value();
    Tensor shape = Tensor::Create(DType::kS32, Shape{1}).value();
    shape.data<int32_t>()[0] = 6;
    const ValueId s = g.AddConstant("shape", shape).value();
    const ValueId y = g.AddNodeValue("y").value();
    REQUIRE(g.AddNode(Node{"reshape", "Reshape", "", {{"allowzero", allowzero}}, {x, s}, {y}}).ok());
    REQUIRE(g.AddOutput(y).ok());
    auto bytes = ExportQdqModel(g);
    if (allowzero == 1) {
      REQUIRE_FALSE(bytes.ok());
      CHECK_THAT(bytes.status().message(), Catch::Contains("'reshape' (Reshape)"));
      CHECK_THAT(bytes.status().message(), Catch::Contains("allowzero = 1"));
      continue;
    }
    const onnx::ModelProto model = ParseModelProto(Export(g, "reshape_opset13"));
    REQUIRE(model.graph().node_size() == 1);
    CHECK(model.graph().node(0).op_type() == "Reshape");
    CHECK(model.graph().node(0).attribute_size() == 0);
  }
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

TEST_CASE("QDQ export writes QLayerNorm and QLookup's Gelu out in opset-13 operators", "[onnx][qdq]") {
  // x -> Quantize -> QLayerNorm -> QLookup(Gelu) -> QSoftmax -> QBatchMatMul(., Transpose(gelu)) -> Dequantize.
  Graph g("transformer_ops");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{4, 8}).value();
  const ValueId xq = Int8Value(g, "x.q", DType::kU8, 0.05f, 128);
  const ValueId scale = g.AddConstant("ln.scale", Filled(DType::kF32, Shape{8})).value();
  const ValueId bias = g.AddConstant("ln.bias", Filled(DType::kF32, Shape{8})).value();
  const ValueId ln = Int8Value(g, "ln.out", DType::kU8, 0.04f, 100);
  const ValueId gelu = Int8Value(g, "gelu.out", DType::kU8, 0.03f, 20);
  const ValueId gt = Int8Value(g, "gelu.t", DType::kU8, 0.03f, 20);
  const ValueId sm = Int8Value(g, "softmax.out", DType::kU8, 1.0f / 256.0f, 0);
  const ValueId mm = Int8Value(g, "mm.out", DType::kU8, 0.01f, 0);
  const ValueId y = g.AddNodeValue("y").value();
  REQUIRE(g.AddNode(Node{"x.quantize", "Quantize", "octet", {}, {x}, {xq}}).ok());
  REQUIRE(g.AddNode(Node{"ln", "QLayerNorm", "octet", {{"epsilon", 1e-5f}}, {xq, scale, bias}, {ln}}).ok());
  REQUIRE(g.AddNode(Node{"gelu", "QLookup", "octet", {{"function", "Gelu"}}, {ln}, {gelu}}).ok());
  REQUIRE(g.AddNode(Node{"softmax", "QSoftmax", "octet", {{"axis", int64_t{-1}}}, {gelu}, {sm}}).ok());
  REQUIRE(g.AddNode(Node{"t", "Transpose", "", {{"perm", std::vector<int64_t>{1, 0}}}, {gelu}, {gt}}).ok());
  REQUIRE(g.AddNode(Node{"mm", "QBatchMatMul", "octet", {}, {sm, gt}, {mm}}).ok());
  REQUIRE(g.AddNode(Node{"y.dequantize", "Dequantize", "octet", {}, {mm}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  const onnx::ModelProto model = ParseModelProto(Export(g, "transformer_ops"));
  const std::vector<std::string> ops = OpTypes(model.graph());
  auto count = [&](const std::string& op) { return std::count(ops.begin(), ops.end(), op); };
  CHECK(count("LayerNormalization") == 0);  // opset 17
  CHECK(count("Gelu") == 0);                // opset 20
  CHECK(count("ReduceMean") == 2);
  CHECK(count("Erf") == 1);
  CHECK(count("Softmax") == 1);
  CHECK(count("MatMul") == 1);
  // ONNX shape inference went through every node: the output has its shape.
  const onnx::TensorShapeProto& shape = model.graph().output(0).type().tensor_type().shape();
  REQUIRE(shape.dim_size() == 2);
  CHECK(DimString(shape.dim(0)) == "4");
  CHECK(DimString(shape.dim(1)) == "4");
}

}  // namespace
}  // namespace octet
