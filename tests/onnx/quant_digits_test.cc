// quant/ passes on the exported digits models (ONNX, so this lives with the ONNX tests): the CNN's two
// Conv+BatchNorm+ReLU blocks fold and fuse with outputs unchanged, and calibration ranges match the float model's.
#include <catch2/catch.hpp>

#include <cmath>

#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "quant/calibrate.h"
#include "quant/fuse.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;

Tensor RunOnce(const Graph& g, const OpRegistry& r, const Tensor& x) {
  return testing::RunWithInputShapes(g, testing::ScalarContext(), r, {x})[0];
}

TEST_CASE("The digits CNN folds both BatchNorms and fuses both ReLUs; logits stay the same", "[onnx][quant]") {
  const Graph original = ReadOnnxModel(kModels + "digits_cnn.onnx").value();
  Graph fused = original;
  auto report = Fuse(fused);
  REQUIRE(report.ok());
  CHECK(report->folded_batch_norms.size() == 2);
  CHECK(report->fused_activations.size() == 2);
  int fused_convs = 0;
  for (const Node& n : fused.nodes()) {
    CHECK(n.op_type != "BatchNormalization");
    fused_convs += n.op_type == "Conv" && FusedActivation(n) == "Relu" ? 1 : 0;
  }
  CHECK(fused_convs == 2);
  const Tensor x = ReadNpy(kModels + "digits_cnn.input0.npy").value();
  const Tensor y0 = RunOnce(original, FloatOpRegistry(), x);
  const Tensor y1 = RunOnce(fused, QuantFloatRegistry(), x);
  double err = 0, mag = 1;
  for (int64_t i = 0; i < y0.NumElements(); ++i) {
    err = std::max(err, std::fabs(double(y0.data<float>()[i]) - y1.data<float>()[i]));
    mag = std::max(mag, std::fabs(double(y0.data<float>()[i])));
  }
  // Folding rounds the weights once instead of normalising after the conv: a few ulps of the logits' magnitude.
  CHECK(err / mag < 1e-5);
}

TEST_CASE("Calibrating the digits models observes the float model's input and output ranges", "[onnx][quant]") {
  for (const char* name : {"digits_mlp", "digits_cnn"}) {
    INFO(name);
    const Graph original = ReadOnnxModel(kModels + name + ".onnx").value();
    auto prepared = Prepare(original, testing::X86Mapping(ObserverKind::kMinMax));
    REQUIRE(prepared.ok());
    const Tensor samples = ReadNpy(kModels + name + ".input0.npy").value();
    const Graph& g = prepared->graph();
    const std::string in = g.value(g.inputs()[0]).name, out = g.value(g.outputs()[0]).name;
    // The MLP takes any batch; the CNN was exported with a fixed batch of 32: there, the second batch is the first
    // scaled, so the ranges still come from more than one batch.
    const int64_t fixed = g.value(g.inputs()[0]).shape->dim(0);
    std::vector<std::vector<Tensor>> batches;
    if (fixed == kUnknownDim) {
      std::vector<Tensor> split = SplitBatches(samples, 10).value();
      for (Tensor& t : split) batches.push_back({std::move(t)});
    } else {
      Tensor scaled = samples.Clone().value();
      for (float& v : scaled.values<float>()) v *= 1.25f;
      batches = {{samples}, {scaled}};
    }
    REQUIRE(batches.size() >= 2);
    testing::CalibrateQuietly(*prepared, batches);
    auto seen = testing::RunAndRecord(original, FloatOpRegistry(), batches, {in, out});
    const auto [xlo, xhi] = testing::MinMaxOf(seen[in]);
    const Observer* ox = prepared->FindObserver(in);
    REQUIRE(ox != nullptr);
    CHECK(ox->min_val()[0] == xlo);
    CHECK(ox->max_val()[0] == xhi);
    const auto [ylo, yhi] = testing::MinMaxOf(seen[out]);
    REQUIRE(seen[out].size() == batches.size());
    const Observer* oy = prepared->FindObserver(out);
    REQUIRE(oy != nullptr);
    // The CNN's output passed the folded convs (weights rounded once instead of Conv then BatchNorm).
    CHECK(oy->min_val()[0] == Approx(ylo).epsilon(1e-5));
    CHECK(oy->max_val()[0] == Approx(yhi).epsilon(1e-5));
    CHECK(ylo < yhi);
    auto qparams = prepared->CalculateQParams();
    REQUIRE(qparams.ok());
    CHECK(qparams->at(out).quant_max() == 127);
    int weights = 0;
    for (const ObserverSlot& s : prepared->slots()) weights += s.role == ObservedRole::kWeight ? 1 : 0;
    CHECK(weights == (std::string(name) == "digits_mlp" ? 2 : 3));
  }
}

}  // namespace
}  // namespace octet
