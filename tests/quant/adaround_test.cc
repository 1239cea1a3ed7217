// AdaRound (quant/adaround.h) on small builder models at 4-bit weights: the learned rounding only ever rounds down or
// up, its reconstruction loss is below nearest rounding's, the loss it reports is the layer's output error measured
// by running the layer (also for the asymmetric loss on the quantized model's inputs), it is deterministic, and
// Convert keeps it when the weight qparams are fixed.
#include "quant/adaround.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>

#include "core/builder.h"
#include "core/executor.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "tests/test_util.h"

namespace octet {
namespace {

// The calibration data's seed. With it AdaRound's losses are 1-2% below nearest's on the single Conv and 2-93% on
// the small CNN's layers, far above the platforms' float differences.
constexpr uint64_t kAdaRoundDataSeed = 20261127;

const Context& AdaRoundTestContext() {
  static const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  return context;
}

// 4-bit symmetric weights ([-8, 7]): per-tensor (qnnpack's MinMax) or per-channel (onednn's).
QConfigMapping AdaRoundFourBitMapping(bool per_channel) {
  QConfig q = GetDefaultQConfig(per_channel ? "onednn" : "qnnpack").value();
  q.weight.options.quant_min = -8;
  q.weight.options.quant_max = 7;
  QConfigMapping mapping;
  mapping.SetGlobal(q);
  return mapping;
}

std::vector<std::vector<Tensor>> AdaRoundBatches(std::mt19937_64& rng, const Shape& shape, int count) {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < count; ++i) out.push_back({testing::RandomTensor(rng, shape, -1.0f, 1.0f)});
  return out;
}

// A strided, padded, grouped Conv (no bias) alone, so its output error is (W~ - W) x.
Graph AdaRoundOneConv(uint64_t seed) {
  GraphBuilder b("one_conv", seed);
  const ValueId x = b.Input("x", DType::kF32, Shape{4, 4, 9, 9});
  b.Output(b.Conv2d("conv", x, {4, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 2, false}));
  return std::move(b).Build().value();
}

// Mean over output positions of the squared output difference summed over channels.
double AdaRoundMeasuredLoss(const Graph& reference, const Graph& rounded,
                            const std::vector<std::vector<Tensor>>& data) {
  double sum = 0.0;
  int64_t positions = 0;
  for (const auto& batch : data) {
    const Tensor a = testing::RunFirstOutput(reference, AdaRoundTestContext(), QuantFloatRegistry(), batch[0]);
    const Tensor b = testing::RunFirstOutput(rounded, AdaRoundTestContext(), QuantFloatRegistry(), batch[0]);
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      const double d = static_cast<double>(a.data<float>()[i]) - b.data<float>()[i];
      sum += d * d;
    }
    positions += a.NumElements() / a.shape().dim(1);
  }
  return sum / static_cast<double>(positions);
}

TEST_CASE("adaround: the reported losses are the layer's measured output error, and AdaRound's is lower",
          "[quant][adaround]") {
  // Fixed data, not drawn from Catch's seed: AdaRound is a heuristic, and on some random draws of this tiny layer it
  // keeps nearest rounding or ends a hair above it (12 of 61 seeds), which says nothing about the implementation.
  std::mt19937_64 rng(kAdaRoundDataSeed);
  const auto calib = AdaRoundBatches(rng, Shape{4, 4, 9, 9}, 3);
  const Graph g = AdaRoundOneConv(3);
  for (const bool per_channel : {false, true}) {
    INFO("per-channel " << per_channel);
    auto qparams = WeightQParamsByNode(g, AdaRoundFourBitMapping(per_channel), &AdaRoundTestContext());
    REQUIRE(qparams.ok());
    REQUIRE(qparams->count("conv") == 1);
    AdaRoundOptions options;
    options.iterations = 300;
    auto result = AdaRound(g, *qparams, calib, AdaRoundTestContext(), options);
    INFO(result.status().message());
    REQUIRE(result.ok());
    REQUIRE(result->report.layers.size() == 1);
    const AdaRoundReport::Layer& layer = result->report.layers[0];
    CHECK(layer.weights == 6 * 2 * 9);
    CHECK(layer.changed > 0);
    CHECK(layer.loss_adaround < layer.loss_nearest);

    Graph adarounded = g;
    REQUIRE(ApplyRoundedWeights(adarounded, result->rounded).ok());
    Graph nearest = g;
    const ValueId w = g.node(g.FindNode("conv")).inputs[1];
    const Tensor error = WeightQuantizationError(g.value(w).data, qparams->at("conv")).value();
    nearest.mutable_value(w).data = g.value(w).data.Clone().value();  // copies of a Graph share tensor data
    for (int64_t i = 0; i < error.NumElements(); ++i)
      nearest.mutable_value(w).data.data<float>()[i] += error.data<float>()[i];
    CHECK(AdaRoundMeasuredLoss(g, nearest, calib) == Approx(layer.loss_nearest).epsilon(1e-3));
    CHECK(AdaRoundMeasuredLoss(g, adarounded, calib) == Approx(layer.loss_adaround).epsilon(1e-3));

    // Each weight went to the grid point below or above it, and the same run gives the same rounding.
    const QParams& q = qparams->at("conv");
    const Tensor& original = g.value(w).data;
    const Tensor& rounded = result->rounded.at("conv");
    const int64_t per_row = original.NumElements() / original.shape().dim(0);
    for (int64_t i = 0; i < original.NumElements(); ++i) {
      const float s = q.scales()[static_cast<size_t>(q.per_channel() ? i / per_row : 0)];
      const float level = rounded.data<float>()[i] / s;
      CHECK(std::fabs(level - std::nearbyint(level)) < 1e-3f);
      CHECK(std::nearbyint(level) >= std::floor(original.data<float>()[i] / s));
      CHECK(std::nearbyint(level) <= std::floor(original.data<float>()[i] / s) + 1);
    }
    auto again = AdaRound(g, *qparams, calib, AdaRoundTestContext(), options);
    REQUIRE(again.ok());
    const Tensor& other = again->rounded.at("conv");
    for (int64_t i = 0; i < rounded.NumElements(); ++i) CHECK(other.data<float>()[i] == rounded.data<float>()[i]);
  }
}

// Conv-ReLU, depthwise Conv-ReLU, global pool, Linear, on [8, 3, 8, 8].
Graph AdaRoundSmallCnn() {
  GraphBuilder b("small_cnn", 5);
  ValueId x = b.Input("x", DType::kF32, Shape{8, 3, 8, 8});
  x = b.ReLU("c1.relu", b.Conv2d("c1", x, {3, 8, {3, 3}, {1, 1}, {1, 1}}));
  x = b.ReLU("dw.relu", b.Conv2d("dw", x, {8, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 8}));
  x = b.Flatten("flatten", b.AdaptiveAvgPool2d1("pool", x));
  b.Output(b.Linear("fc", x, 8, 5));
  return std::move(b).Build().value();
}

// `g` with the output of node `name` as its only output.
Graph AdaRoundNodeOutput(const Graph& g, const std::string& name) {
  Graph out = g;
  out.mutable_outputs().clear();
  REQUIRE(out.AddOutput(g.node(g.FindNode(name)).outputs[0]).ok());
  return out;
}

TEST_CASE("adaround: every layer of a small CNN reconstructs better, and Convert keeps the rounding",
          "[quant][adaround]") {
  std::mt19937_64 rng(kAdaRoundDataSeed + 1);  // fixed data, as above
  const auto calib = AdaRoundBatches(rng, Shape{8, 3, 8, 8}, 2);
  const Graph g = AdaRoundSmallCnn();
  const QConfigMapping mapping = AdaRoundFourBitMapping(false);
  auto qparams = WeightQParamsByNode(g, mapping, &AdaRoundTestContext());
  REQUIRE(qparams.ok());
  auto result = AdaRound(g, *qparams, calib, AdaRoundTestContext(), {});
  INFO(result.status().message());
  REQUIRE(result.ok());
  REQUIRE(result->report.layers.size() == 3);
  CHECK(result->report.skipped.empty());
  for (const auto& layer : result->report.layers) {
    INFO(layer.node << ": nearest " << layer.loss_nearest << ", AdaRound " << layer.loss_adaround);
    CHECK(layer.loss_adaround < layer.loss_nearest);
  }

  // Prepared from the rounded graph with the qparams fixed, Convert's int weights are W~ / s exactly.
  Graph rounded = g;
  REQUIRE(ApplyRoundedWeights(rounded, result->rounded).ok());
  auto prepared = Prepare(rounded, mapping);
  REQUIRE(prepared.ok());
  REQUIRE(Calibrate(*prepared, AdaRoundTestContext(), calib).ok());
  REQUIRE(FixWeightQParams(*prepared, result->weight_qparams).ok());
  auto converted = Convert(*prepared);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  int checked = 0;
  for (const auto& [node, w] : result->rounded) {
    const std::string weight_name = g.value(g.node(g.FindNode(node)).inputs[1]).name;
    const QParams& q = result->weight_qparams.at(weight_name);
    for (ValueId id = 0; id < static_cast<ValueId>(converted->num_values()); ++id) {
      const Value& v = converted->value(id);
      if (v.kind != ValueKind::kConstant || v.data.dtype() != DType::kS8 || v.name.rfind(weight_name, 0) != 0) continue;
      REQUIRE(v.data.NumElements() == w.NumElements());
      for (int64_t i = 0; i < w.NumElements(); ++i) {
        CHECK(static_cast<int>(v.data.data<int8_t>()[i]) ==
              static_cast<int>(std::nearbyint(w.data<float>()[i] / q.scale())));
      }
      ++checked;
    }
  }
  CHECK(checked == 3);
}

TEST_CASE("adaround on the quantized model's inputs: the reported losses are the measured ||W x - W~ xq||^2",
          "[quant][adaround]") {
  std::mt19937_64 rng(kAdaRoundDataSeed + 1);  // the small CNN's fixed data
  const auto calib = AdaRoundBatches(rng, Shape{8, 3, 8, 8}, 2);
  const Graph g = AdaRoundSmallCnn();
  auto qparams = WeightQParamsByNode(g, AdaRoundFourBitMapping(false), &AdaRoundTestContext());
  REQUIRE(qparams.ok());
  AdaRoundOptions options;
  options.quantized_inputs = true;
  auto result = AdaRound(g, *qparams, calib, AdaRoundTestContext(), options);
  INFO(result.status().message());
  REQUIRE(result.ok());
  REQUIRE(result->report.layers.size() == 3);
  // The first layer reads the graph input, which no rounding changes: the same rounding as the symmetric loss.
  auto symmetric = AdaRound(g, *qparams, calib, AdaRoundTestContext(), {});
  REQUIRE(symmetric.ok());
  const Tensor& c1 = result->rounded.at("c1");
  for (int64_t i = 0; i < c1.NumElements(); ++i) {
    CHECK(c1.data<float>()[i] == symmetric->rounded.at("c1").data<float>()[i]);
  }
  // Layers after it: the float model's output against the output of the model with every layer up to it rounded
  // (AdaRound's rounding before it; nearest's or AdaRound's at it), measured by running both.
  Graph rounded = g;
  REQUIRE(ApplyRoundedWeights(rounded, result->rounded).ok());
  for (size_t k = 1; k < 3; ++k) {
    const AdaRoundReport::Layer& layer = result->report.layers[k];
    INFO(layer.node << ": nearest " << layer.loss_nearest << ", AdaRound " << layer.loss_adaround);
    CHECK(AdaRoundMeasuredLoss(AdaRoundNodeOutput(g, layer.node), AdaRoundNodeOutput(rounded, layer.node), calib) ==
          Approx(layer.loss_adaround).epsilon(1e-3));
    Graph nearest = g;
    for (size_t j = 0; j < k; ++j) {
      const std::string& before = result->report.layers[j].node;
      REQUIRE(ApplyRoundedWeights(nearest, {{before, result->rounded.at(before)}}).ok());
    }
    const ValueId w = g.node(g.FindNode(layer.node)).inputs[1];
    const Tensor error = WeightQuantizationError(g.value(w).data, qparams->at(layer.node)).value();
    nearest.mutable_value(w).data = g.value(w).data.Clone().value();
    for (int64_t i = 0; i < error.NumElements(); ++i)
      nearest.mutable_value(w).data.data<float>()[i] += error.data<float>()[i];
    CHECK(AdaRoundMeasuredLoss(AdaRoundNodeOutput(g, layer.node), AdaRoundNodeOutput(nearest, layer.node), calib) ==
          Approx(layer.loss_nearest).epsilon(1e-3));
    CHECK(layer.changed > 0);
    // No "below nearest" check here: on this data the depthwise layer ends 4% above nearest's loss (the regularizer's
    // pull to 0 or 1 wins), which is AdaRound's heuristic, not the loss.
  }
}

TEST_CASE("adaround: no calibration data is an error", "[quant][adaround]") {
  const Graph g = AdaRoundOneConv(1);
  auto qparams = WeightQParamsByNode(g, AdaRoundFourBitMapping(false), &AdaRoundTestContext());
  REQUIRE(qparams.ok());
  auto result = AdaRound(g, *qparams, {}, AdaRoundTestContext());
  REQUIRE(!result.ok());
  CHECK(result.status().message().find("--calib") != std::string::npos);
}

}  // namespace
}  // namespace octet
