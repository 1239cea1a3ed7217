// AdaRound on the exported digits CNN at low-bit weights (issue #18), x86 preset activations, weights per channel and
// per tensor, on the 360 held-out images. At 4 bits rounding to nearest already keeps float accuracy, so AdaRound can
// only hold it; at 3 bits it wins at least 3 accuracy points back. The figures (2 bits too) are printed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <utility>

#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "quant/adaround.h"
#include "quant/batch_norm_stats.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fuse.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;

const Context& AdaRoundDigitsContext() {
  static const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  return context;
}

Tensor AdaRoundDigitsImages(const std::string& file) {
  Tensor x = ReadNpy(kModels + file).value();
  REQUIRE(x.shape().rank() == 2);
  return x.Reshaped(Shape{x.shape().dim(0), 1, 8, 8}).value();
}

// Percent of the held-out images the int8 model classifies right.
double AdaRoundDigitsAccuracy(const Graph& int8, const Tensor& x, const Tensor& labels) {
  const Tensor logits = testing::RunWithInputShapes(int8, AdaRoundDigitsContext(), QuantizedGraphRegistry(), {x})[0];
  return testing::Top1Percent(logits, labels);
}

// A digits model (`model`.onnx) quantized statically with x86's activations and `bits`-bit weights (per channel or per
// tensor), its weights rounded to nearest or by AdaRound (on the float inputs of the calibration batches), as `octet
// quantize --weight-bits 4 [--per-tensor] [--adaround]` does.
Graph LowBitDigits(const std::string& model, int bits, bool per_channel, bool adaround,
                   const std::vector<std::vector<Tensor>>& calib) {
  Graph g = ReadOnnxModel(kModels + model + ".onnx").value();
  FoldConstantNodes(g);
  REQUIRE(FoldBatchNormKeepingStats(g).ok());
  QConfig q = GetDefaultQConfig(per_channel ? "x86" : "qnnpack").value();
  q.activation = GetDefaultQConfig("x86").value().activation;
  q.weight.options.quant_min = -(1 << (bits - 1));
  q.weight.options.quant_max = (1 << (bits - 1)) - 1;
  QConfigMapping mapping;
  mapping.SetGlobal(q);
  std::map<std::string, QParams> fixed;
  if (adaround) {
    auto qparams = WeightQParamsByNode(g, mapping, &AdaRoundDigitsContext());
    REQUIRE(qparams.ok());
    auto result = AdaRound(g, *qparams, calib, AdaRoundDigitsContext());
    INFO(result.status().message());
    REQUIRE(result.ok());
    CHECK(result->report.skipped.empty());
    CHECK(result->report.layers.size() == qparams->size());
    REQUIRE(ApplyRoundedWeights(g, result->rounded).ok());
    fixed = result->weight_qparams;
  }
  auto prepared = Prepare(g, mapping);
  REQUIRE(prepared.ok());
  CalibrateOptions quiet;
  quiet.progress = [](int64_t, int64_t) {};
  REQUIRE(Calibrate(*prepared, AdaRoundDigitsContext(), calib, quiet).ok());
  REQUIRE(FixWeightQParams(*prepared, fixed).ok());
  auto converted = Convert(*prepared);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  return std::move(*converted);
}

// The first 256 training images in batches of 64.
std::vector<std::vector<Tensor>> DigitsCalibration() {
  std::vector<std::vector<Tensor>> calib;
  const std::vector<Tensor> split = SplitBatches(AdaRoundDigitsImages("digits_calib_x.npy"), 64).value();
  for (const Tensor& t : split) calib.push_back({t});
  return calib;
}

TEST_CASE("AdaRound at 4, 3 and 2-bit weights on the digits CNN", "[onnx][adaround]") {
  const Tensor labels = ReadNpy(kModels + "digits_test_labels.npy").value();
  const Tensor test = AdaRoundDigitsImages("digits_test_x.npy");
  std::vector<std::vector<Tensor>> calib = DigitsCalibration();
  std::map<std::pair<int, bool>, std::pair<double, double>> accuracy;  // (bits, per-channel) -> (nearest, AdaRound)
  for (const int bits : {4, 3, 2}) {
    for (const bool per_channel : {true, false}) {
      const double nearest =
          AdaRoundDigitsAccuracy(LowBitDigits("digits_cnn", bits, per_channel, false, calib), test, labels);
      const double adaround =
          AdaRoundDigitsAccuracy(LowBitDigits("digits_cnn", bits, per_channel, true, calib), test, labels);
      WARN("digits CNN, " << bits << "-bit " << (per_channel ? "per-channel" : "per-tensor") << " weights: nearest "
                          << nearest << "%, AdaRound " << adaround << "%");
      accuracy[{bits, per_channel}] = {nearest, adaround};
    }
  }
  // At 4 bits rounding to nearest already keeps float accuracy (no 3 points to win): AdaRound must not lose any.
  CHECK(accuracy[{4, true}].second >= accuracy[{4, true}].first - 1.0);
  CHECK(accuracy[{4, false}].second >= accuracy[{4, false}].first - 1.0);
  // Below, where rounding to nearest costs accuracy, AdaRound wins it back.
  CHECK(accuracy[{3, true}].second >= accuracy[{3, true}].first + 3.0);
  CHECK(accuracy[{3, false}].second >= accuracy[{3, false}].first + 3.0);
  // At 2 bits (4 levels) it is printed only: AdaRound's result there swings with the learning rate either way.
}

// The model for the 4-bit goal: the digits CNN with a depthwise block, trained by `octet train`
// (tests/data/models/make_digits_dw_cnn.py). On it too 4-bit weights rounded to nearest keep float accuracy (within a
// point), so there AdaRound can only hold it; at 3 bits, where nearest rounding loses accuracy, it wins it back. The
// figures (nearest, AdaRound, float; per channel and per tensor) are printed. Its own ctest entry, left out of the
// sanitizer builds (tests/CMakeLists.txt).
TEST_CASE("AdaRound at 4 and 3-bit weights on the digits CNN with a depthwise block", "[adaround_dw]") {
  const Tensor labels = ReadNpy(kModels + "digits_test_labels.npy").value();
  const Tensor test = AdaRoundDigitsImages("digits_test_x.npy");
  const std::vector<std::vector<Tensor>> calib = DigitsCalibration();
  const Graph float_graph = ReadOnnxModel(kModels + "digits_dw_cnn.onnx").value();
  const double float_accuracy = AdaRoundDigitsAccuracy(float_graph, test, labels);
  CHECK(float_accuracy >= 93.0);
  for (const int bits : {4, 3}) {
    for (const bool per_channel : {true, false}) {
      const double nearest =
          AdaRoundDigitsAccuracy(LowBitDigits("digits_dw_cnn", bits, per_channel, false, calib), test, labels);
      const double adaround =
          AdaRoundDigitsAccuracy(LowBitDigits("digits_dw_cnn", bits, per_channel, true, calib), test, labels);
      WARN("digits CNN with a depthwise block, " << bits << "-bit " << (per_channel ? "per-channel" : "per-tensor")
                                                 << " weights: nearest " << nearest << "%, AdaRound " << adaround
                                                 << "%, float " << float_accuracy << "%");
      CHECK(adaround >= nearest - 1.0);
    }
  }
}

}  // namespace
}  // namespace octet
