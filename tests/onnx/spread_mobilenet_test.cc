// The accuracy passes on the spread-range MobileNetV2 (tests/data/models/make_spread_mobilenet.py): its folded
// depthwise weights spread over five decades per channel, as trained MobileNets do after BatchNorm folding (and more),
// so per-tensor int8 weights lose most of their channels. What this test holds is issue #18's claim: equalization plus
// bias correction bring per-tensor int8 close to per-channel (on this model, above it: equalization also evens out the
// activation ranges that per-channel weights leave alone).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "core/executor.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "quant/adaround.h"
#include "quant/batch_norm_stats.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/equalize.h"
#include "quant/fuse.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/quantized_registry.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

Tensor RunSpread(const Graph& g, const OpRegistry& registry, const Tensor& x) {
  return testing::RunWithInputShapes(g, testing::ScalarContext(), registry, {x})[0];
}

// Output SQNR (dB) against `reference` of `graph` quantized statically with `qconfig`, calibrated through `calibrated`
// (the graph before bias correction; `graph` when null), on `x`.
double SpreadSqnr(const Graph& reference, const Graph& graph, const QConfig& qconfig,
                  const std::vector<std::vector<Tensor>>& calib, const Tensor& x, const Graph* calibrated = nullptr) {
  const Graph converted =
      testing::ConvertCalibratedThrough(graph, qconfig, calib, testing::ScalarContext(), calibrated);
  return testing::TensorSqnrDb(RunSpread(reference, QuantFloatRegistry(), x),
                               RunSpread(converted, QuantizedGraphRegistry(), x));
}

TEST_CASE(
    "spread MobileNetV2: --equalize --bias-correction brings per-tensor "
    "int8 near per-channel",
    "[onnx][equalize]") {
  auto model = ReadOnnxModel(testing::kModels + "spread_mobilenet_v2.onnx");
  INFO(model.status().message());
  REQUIRE(model.ok());
  const Tensor images = ReadNpy(testing::kModels + "spread_mobilenet_v2.input0.npy").value();
  auto split = SplitBatches(images, 8).value();  // 4 batches of 8: calibrate on 3, measure on the last
  REQUIRE(split.size() == 4);
  const std::vector<std::vector<Tensor>> calib = {{split[0]}, {split[1]}, {split[2]}};
  const Tensor x = split[3];

  // The imported model computes what PyTorch did.
  const Tensor torch_logits = ReadNpy(testing::kModels + "spread_mobilenet_v2.output0.npy").value();
  const Tensor all = RunSpread(*model, QuantFloatRegistry(), images);
  CHECK(testing::TensorSqnrDb(torch_logits, all) > 100.0);

  Graph folded = *model;
  FoldConstantNodes(folded);
  auto stats = FoldBatchNormKeepingStats(folded);
  REQUIRE(stats.ok());

  // Equalization alone is exact in float.
  Graph equalized = folded;
  PreActivationStats cle_stats = *stats;
  EqualizeOptions no_hba;
  no_hba.absorb_high_bias = false;
  auto cle = EqualizeCrossLayer(equalized, &cle_stats, no_hba);
  REQUIRE(cle.ok());
  CHECK(cle->pairs.size() >= 10);
  CHECK(testing::TensorSqnrDb(RunSpread(*model, QuantFloatRegistry(), x),
                              RunSpread(equalized, QuantFloatRegistry(), x)) > 100.0);

  // The full pipeline: CLE + high-bias absorption + empirical bias correction for per-tensor weights.
  const QConfig per_tensor = GetDefaultQConfig("qnnpack").value();  // MinMax per-tensor symmetric weights
  QConfig per_channel = GetDefaultQConfig("onednn").value();        // the same activations, per-channel weights
  REQUIRE(per_tensor.activation == per_channel.activation);
  Graph with_hba = folded;
  PreActivationStats full_stats = *stats;
  REQUIRE(EqualizeCrossLayer(with_hba, &full_stats).ok());
  Graph corrected = with_hba;
  QConfigMapping mapping;
  mapping.SetGlobal(per_tensor);
  auto qparams = WeightQParamsByNode(corrected, mapping, &testing::ScalarContext());
  REQUIRE(qparams.ok());
  auto bc = CorrectBias(corrected, *qparams, BiasCorrectionMode::kEmpirical, calib, nullptr, testing::ScalarContext());
  REQUIRE(bc.ok());

  const double plain = SpreadSqnr(*model, *model, per_tensor, calib, x);
  const double cle_only = SpreadSqnr(*model, equalized, per_tensor, calib, x);
  const double hba = SpreadSqnr(*model, with_hba, per_tensor, calib, x);
  const double full = SpreadSqnr(*model, corrected, per_tensor, calib, x, &with_hba);
  const double channel = SpreadSqnr(*model, *model, per_channel, calib, x);
  WARN("spread MobileNetV2 output SQNR: per-tensor "
       << plain << " dB, + CLE " << cle_only << " dB, + high-bias absorption " << hba << " dB, + bias correction "
       << full << " dB, per-channel " << channel << " dB");
  CHECK(full >= plain + 10.0);
  CHECK(full >= channel - 3.0);
}

// Output SQNR (dB) against `reference` of `folded` (BatchNorms folded) quantized statically with `qconfig` and 4-bit
// weights, rounded to nearest or by AdaRound.
double FourBitSpreadSqnr(const Graph& reference, const Graph& folded, QConfig qconfig, bool adaround,
                         const std::vector<std::vector<Tensor>>& calib, const Tensor& x) {
  qconfig.weight.options.quant_min = -8;
  qconfig.weight.options.quant_max = 7;
  QConfigMapping mapping;
  mapping.SetGlobal(qconfig);
  Graph g = folded;
  std::map<std::string, QParams> fixed;
  if (adaround) {
    auto qparams = WeightQParamsByNode(g, mapping, &testing::ScalarContext());
    REQUIRE(qparams.ok());
    auto result = AdaRound(g, *qparams, calib, testing::ScalarContext());
    INFO(result.status().message());
    REQUIRE(result.ok());
    CHECK(result->report.skipped.empty());
    REQUIRE(ApplyRoundedWeights(g, result->rounded).ok());
    fixed = result->weight_qparams;
  }
  auto prepared = Prepare(g, mapping);
  REQUIRE(prepared.ok());
  REQUIRE(Calibrate(*prepared, testing::ScalarContext(), calib).ok());
  REQUIRE(FixWeightQParams(*prepared, fixed).ok());
  auto converted = Convert(*prepared);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  return testing::TensorSqnrDb(RunSpread(reference, QuantFloatRegistry(), x),
                               RunSpread(*converted, QuantizedGraphRegistry(), x));
}

// The AdaRound cases' data: the model, its BatchNorm-folded copy, the first 24 committed images as three
// calibration batches and the last 8 as the test batch.
struct AdaRoundSpreadSetup {
  Graph model;
  Graph folded;
  std::vector<std::vector<Tensor>> calib;
  Tensor x;
};

AdaRoundSpreadSetup LoadAdaRoundSpreadSetup() {
  auto model = ReadOnnxModel(testing::kModels + "spread_mobilenet_v2.onnx");
  REQUIRE(model.ok());
  const Tensor images = ReadNpy(testing::kModels + "spread_mobilenet_v2.input0.npy").value();
  auto split = SplitBatches(images, 8).value();
  REQUIRE(split.size() == 4);
  AdaRoundSpreadSetup setup{*model, *model, {{split[0]}, {split[1]}, {split[2]}}, split[3]};
  FoldConstantNodes(setup.folded);
  REQUIRE(FoldBatchNormKeepingStats(setup.folded).ok());
  return setup;
}

// [adaround_spread]: its own ctest entry, which the sanitizer builds leave out (about 200 CPU s there).
TEST_CASE("spread MobileNetV2: AdaRound at 4-bit weights beats rounding to nearest by 6 dB",
          "[adaround_spread][adaround]") {
  const AdaRoundSpreadSetup setup = LoadAdaRoundSpreadSetup();
  const Graph& model = setup.model;
  const Graph& folded = setup.folded;
  const std::vector<std::vector<Tensor>>& calib = setup.calib;
  const Tensor& x = setup.x;
  const QConfig per_channel = GetDefaultQConfig("onednn").value();
  const double nearest = FourBitSpreadSqnr(model, folded, per_channel, false, calib, x);
  const double adaround = FourBitSpreadSqnr(model, folded, per_channel, true, calib, x);
  WARN("spread MobileNetV2, 4-bit per-channel weights: output SQNR nearest " << nearest << " dB, AdaRound " << adaround
                                                                             << " dB");
  CHECK(adaround >= nearest + 6.0);
}

// `folded` with the weight of each node in `qparams` moved to its nearest grid point (per channel along the qparams'
// axis): the weights rounding to nearest gives, kept in float.
Graph NearestGridWeights(const Graph& folded, const std::map<std::string, QParams>& qparams) {
  Graph g = folded;
  for (const auto& [name, q] : qparams) {
    const int index = g.FindNode(name);
    REQUIRE(index >= 0);
    // A copy of a Tensor shares its buffer: write a clone, or `folded` (and the model) would change too.
    Tensor& slot = g.mutable_value(g.node(index).inputs[1]).data;
    Tensor w = slot.Clone().value();
    const Shape& shape = w.shape();
    int64_t inner = 1;
    for (int d = q.per_channel() ? q.axis() + 1 : shape.rank(); d < shape.rank(); ++d) inner *= shape.dim(d);
    float* data = w.data<float>();
    for (int64_t i = 0; i < w.NumElements(); ++i) {
      const size_t c = q.per_channel() ? static_cast<size_t>((i / inner) % shape.dim(q.axis())) : 0;
      const float s = q.scales()[c];
      const float zp = static_cast<float>(q.zero_points()[c]);
      const float level = std::clamp(std::nearbyint(data[i] / s) + zp, static_cast<float>(q.quant_min()),
                                     static_cast<float>(q.quant_max()));
      data[i] = (level - zp) * s;
    }
    slot = w;
  }
  return g;
}

// The paper's setting for 4-bit weights, W4A32: weights on their 4-bit grid, activations float, so the output SQNR
// measures the weights' rounding alone. Here AdaRound's asymmetric reconstruction (AdaRoundOptions::quantized_inputs,
// inputs from the model whose earlier layers are already rounded, activations float as in AIMET) wins about 12 dB over
// rounding to nearest; the symmetric loss on float inputs, the default, only about 1 dB. With 8-bit activations
// (the test above) this model's output SQNR is bounded by the activations (8-bit weights rounded to nearest reach
// about 8 to 11 dB), so there the two losses rank the other way.
TEST_CASE("spread MobileNetV2: AdaRound on quantized inputs beats rounding to nearest by 6 dB at W4A32",
          "[adaround_spread][adaround]") {
  const AdaRoundSpreadSetup setup = LoadAdaRoundSpreadSetup();
  const Graph& model = setup.model;
  const Graph& folded = setup.folded;
  const std::vector<std::vector<Tensor>>& calib = setup.calib;
  const Tensor& x = setup.x;
  QConfig qconfig = GetDefaultQConfig("onednn").value();
  qconfig.weight.options.quant_min = -8;
  qconfig.weight.options.quant_max = 7;
  QConfigMapping mapping;
  mapping.SetGlobal(qconfig);
  auto qparams = WeightQParamsByNode(folded, mapping, &testing::ScalarContext());
  REQUIRE(qparams.ok());
  AdaRoundOptions options;
  options.quantized_inputs = true;
  auto result = AdaRound(folded, *qparams, calib, testing::ScalarContext(), options);
  INFO(result.status().message());
  REQUIRE(result.ok());
  CHECK(result->report.skipped.empty());
  REQUIRE(result->rounded.size() == qparams->size());
  Graph learned = folded;
  REQUIRE(ApplyRoundedWeights(learned, result->rounded).ok());
  const Graph nearest_graph = NearestGridWeights(folded, *qparams);
  const Tensor reference = RunSpread(model, QuantFloatRegistry(), x);
  const double nearest = testing::TensorSqnrDb(reference, RunSpread(nearest_graph, QuantFloatRegistry(), x));
  const double adaround = testing::TensorSqnrDb(reference, RunSpread(learned, QuantFloatRegistry(), x));
  WARN("spread MobileNetV2, 4-bit per-channel weights, float activations: output SQNR nearest "
       << nearest << " dB, AdaRound (quantized inputs) " << adaround << " dB");
  CHECK(adaround >= nearest + 6.0);
}

}  // namespace
}  // namespace octet
