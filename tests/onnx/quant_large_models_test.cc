// Static int8 ResNet-18 and MobileNetV2 (seeded random weights, tests/onnx/large_models.h; skipped when absent):
// calibrated on 8 seeded N(0, 1) images with the onednn preset (HistogramObserver activations, per-channel symmetric
// weights), their logits on the committed reference input keep at least 28 dB (ResNet-18) and 34 dB (MobileNetV2)
// SQNR against float, run bit-identically at 1 and 2 threads, and pass the numeric guard (issue 21) on the
// calibration images and the reference input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "numeric_suite/quantization_guard.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/onnx/large_models.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

double SqnrDb(const Tensor& x, const Tensor& y) {
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const double a = x.data<float>()[i], d = a - y.data<float>()[i];
    signal += a * a;
    noise += d * d;
  }
  return 10.0 * std::log10(signal / noise);
}

Tensor RunInt8(const Graph& g, const Tensor& x, int threads) {
  const Context context = Context::ForIsas(DetectedIsas(), threads);
  return testing::RunFirstOutput(g, context, QuantizedGraphRegistry(), x);
}

void CheckPtq(const std::string& name, double min_sqnr_db) {
  const std::string base = (testing::LargeModelDir() / name).string();
  Graph graph = ReadOnnxModel(base + ".onnx").value();
  const Tensor input = ReadNpy(base + ".input0.npy").value();
  const Tensor expected = ReadNpy(base + ".output0.npy").value();

  std::vector<std::vector<Tensor>> batches = testing::NormalBatches(input.shape(), 8, 7);
  auto prepared = Prepare(graph, GetDefaultQConfigMapping("onednn").value());
  INFO(prepared.status().message());
  REQUIRE(prepared.ok());
  const Context context = Context::ForIsas(DetectedIsas(), 2);
  testing::CalibrateQuietly(*prepared, batches, context);
  auto converted = Convert(*prepared);
  INFO(converted.status().message());
  REQUIRE(converted.ok());

  const Tensor one = RunInt8(*converted, input, 1);
  const Tensor two = RunInt8(*converted, input, 2);
  REQUIRE(one.SizeBytes() == two.SizeBytes());
  CHECK(std::memcmp(one.raw_data(), two.raw_data(), one.SizeBytes()) == 0);
  const double sqnr = SqnrDb(expected, one);
  std::printf("quant_large_models: %s static int8 (onednn preset) logits SQNR %.1f dB (need %.0f)\n", name.c_str(),
              sqnr, min_sqnr_db);
  CHECK(sqnr >= min_sqnr_db);

  batches.push_back({input});
  GuardOptions guard_options;
  guard_options.context = &context;
  auto guard = CheckQuantization(graph, *converted, batches, "calibration", guard_options);
  INFO(guard.status().message());
  REQUIRE(guard.ok());
  INFO(FormatGuardReport(*guard));
  std::printf("quant_large_models: %s guard worst output SQNR %.1f dB\n", name.c_str(), guard->worst_sqnr_db);
  CHECK(guard->passed);
}

TEST_CASE("Static int8 ResNet-18 and MobileNetV2 keep 28 and 34 dB logits SQNR (when generated)", "[onnx][convert]") {
  if (!testing::HaveLargeModels(testing::LargeModelDir())) {
    testing::Skip("ResNet-18 and MobileNetV2 static int8 SQNR: no models in " + testing::LargeModelDir().string() +
                  " (write them with /usr/bin/python3 tests/data/models/generate.py --large DIR)");
    return;
  }
  CheckPtq("resnet18", 28.0);
  CheckPtq("mobilenet_v2", 34.0);
}

}  // namespace
}  // namespace octet
