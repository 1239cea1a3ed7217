// Dynamic and weight-only quantization of the committed ONNX models (tests/data/models): the digits MLP keeps the
// float model's accuracy on the 360 held-out images, and the two-layer LSTM language model's outputs stay within
// 40 dB SQNR of float (dynamic and weight-only). The figures are printed (WARN) so that a run shows them.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/executor.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "ops/int8/int8_ops.h"
#include "quant/dynamic.h"
#include "quant/quantized_registry.h"
#include "quant/weight_only.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;

std::vector<Tensor> RunModel(const Graph& g, const OpRegistry& registry, const std::vector<Tensor>& inputs,
                             int threads = 1) {
  return testing::RunWithInputShapes(g, testing::ContextFor(Isa::kScalar, threads), registry, inputs);
}

double Accuracy(const Tensor& logits, const Tensor& labels) {
  const int64_t n = logits.shape().dim(0), c = logits.shape().dim(1);
  int64_t right = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits.data<float>() + i * c;
    int64_t best = 0;
    for (int64_t j = 1; j < c; ++j) best = row[j] > row[best] ? j : best;
    right += best == labels.data<int32_t>()[i] ? 1 : 0;
  }
  return static_cast<double>(right) / static_cast<double>(n);
}

QConfigMapping DynamicMapping() {
  QConfigMapping m;
  m.SetGlobal(GetDefaultDynamicQConfig(true));
  return m;
}

TEST_CASE("Dynamic int8 digits MLP: the float model's accuracy on the 360 held-out images", "[onnx][dynamic]") {
  const Graph model = ReadOnnxModel(kModels + "digits_mlp.onnx").value();
  const Tensor x = ReadNpy(kModels + "digits_test_x.npy").value();
  const Tensor labels = ReadNpy(kModels + "digits_test_labels.npy").value();
  REQUIRE(x.shape() == Shape{360, 64});
  const double float_accuracy = Accuracy(RunModel(model, FloatOpRegistry(), {x})[0], labels);
  for (bool reduce_range : {true, false}) {
    QuantizeDynamicOptions o;
    o.reduce_range = reduce_range;
    QuantizeDynamicReport report;
    const Graph q = QuantizeDynamic(model, DynamicMapping(), o, &report).value();
    CHECK(report.quantized == std::vector<std::string>{"/fc1/Gemm", "/fc2/Gemm"});
    const double accuracy = Accuracy(RunModel(q, QuantizedGraphRegistry(), {x})[0], labels);
    WARN("digits MLP accuracy: float " << float_accuracy * 100 << "%, dynamic int8 (reduce_range "
                                       << reduce_range << ") " << accuracy * 100 << "%");
    CHECK(accuracy == float_accuracy);
  }
  CHECK(float_accuracy > 0.85);  // the committed model (89.4% when trained)
}

TEST_CASE("Weight-only int8 digits MLP: the float model's accuracy", "[onnx][dynamic]") {
  const Graph model = ReadOnnxModel(kModels + "digits_mlp.onnx").value();
  const Tensor x = ReadNpy(kModels + "digits_test_x.npy").value();
  const Tensor labels = ReadNpy(kModels + "digits_test_labels.npy").value();
  QConfigMapping m;
  m.SetGlobal(GetDefaultQConfig("x86").value());
  std::vector<std::string> quantized;
  const Graph q = QuantizeWeightOnly(model, m, {}, &quantized).value();
  CHECK(quantized == std::vector<std::string>{"/fc1/Gemm", "/fc2/Gemm"});
  const OpRegistry registry = QuantizedGraphRegistry();
  if (registry.Find(kInt8Domain, "Dequantize") == nullptr) {
    testing::Skip("weight-only digits MLP accuracy: the octet.Dequantize operator is not in this build yet");
    return;
  }
  const double float_accuracy = Accuracy(RunModel(model, FloatOpRegistry(), {x})[0], labels);
  const double accuracy = Accuracy(RunModel(q, registry, {x})[0], labels);
  WARN("digits MLP accuracy: float " << float_accuracy * 100 << "%, weight-only int8 " << accuracy * 100 << "%");
  CHECK(accuracy == float_accuracy);
}

TEST_CASE("Dynamic int8 LSTM language model: outputs within 40 dB SQNR of float", "[onnx][dynamic]") {
  const Graph model = ReadOnnxModel(kModels + "lstm_lm.onnx").value();
  std::vector<Tensor> inputs;
  for (int i = 0; i < 3; ++i) inputs.push_back(ReadNpy(kModels + "lstm_lm.input" + std::to_string(i) + ".npy").value());
  const std::vector<Tensor> yf = RunModel(model, FloatOpRegistry(), inputs);
  for (bool reduce_range : {false, true}) {
    QuantizeDynamicOptions o;
    o.reduce_range = reduce_range;
    QuantizeDynamicReport report;
    const Graph q = QuantizeDynamic(model, DynamicMapping(), o, &report).value();
    CHECK(report.quantized == std::vector<std::string>{"/rnn/LSTM", "/rnn/LSTM_1", "/decoder/MatMul"});
    const std::vector<Tensor> yq = RunModel(q, QuantizedGraphRegistry(), inputs);
    const std::vector<Tensor> yq2 = RunModel(q, QuantizedGraphRegistry(), inputs, 2);
    const char* names[] = {"logits", "h", "c"};
    for (size_t o = 0; o < yf.size(); ++o) {
      const double sqnr = testing::TensorSqnrDb(yf[o], yq[o]);
      WARN("lstm_lm " << names[o] << ": dynamic int8 (reduce_range " << reduce_range << ") SQNR " << sqnr
                      << " dB against float");
      // 8-bit activations (octet's default: its kernels need no reduce_range) reach 40 dB; PyTorch's 7-bit
      // activations (FBGEMM's reduce_range) lose about 6 dB.
      CHECK(sqnr >= (reduce_range ? 34.0 : 40.0));
      CHECK(std::memcmp(yq[o].raw_data(), yq2[o].raw_data(), yq[o].SizeBytes()) == 0);
    }
  }
}

TEST_CASE("Weight-only int8 LSTM language model: outputs within 40 dB SQNR of float", "[onnx][dynamic]") {
  const Graph model = ReadOnnxModel(kModels + "lstm_lm.onnx").value();
  std::vector<Tensor> inputs;
  for (int i = 0; i < 3; ++i) inputs.push_back(ReadNpy(kModels + "lstm_lm.input" + std::to_string(i) + ".npy").value());
  QConfigMapping m;
  m.SetGlobal(GetDefaultDynamicQConfig(true));
  std::vector<std::string> quantized;
  const Graph q = QuantizeWeightOnly(model, m, {}, &quantized).value();
  CHECK(quantized == std::vector<std::string>{"/rnn/LSTM", "/rnn/LSTM_1", "/decoder/MatMul"});
  const std::vector<Tensor> yf = RunModel(model, FloatOpRegistry(), inputs);
  const std::vector<Tensor> yq = RunModel(q, QuantizedGraphRegistry(), inputs);
  const char* names[] = {"logits", "h", "c"};
  for (size_t o = 0; o < yf.size(); ++o) {
    const double sqnr = testing::TensorSqnrDb(yf[o], yq[o]);
    WARN("lstm_lm " << names[o] << ": weight-only int8 SQNR " << sqnr << " dB against float");
    CHECK(sqnr >= 40.0);
  }
}

}  // namespace
}  // namespace octet
