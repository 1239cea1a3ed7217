// Sensitivity analysis on the exported digits CNN (x86 preset: Histogram activations, per-channel weights), with
// the output-SQNR metric and with top-1 accuracy on the 360 held-out images. The ranking and proposal are printed
// for the record; the proposal's figure is checked against an independent conversion that keeps the same nodes
// float through the QConfigMapping (None per node name) instead of ConvertOptions::keep_float.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <optional>

#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "numeric_suite/metrics.h"
#include "numeric_suite/sensitivity.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;

// Images [N, 64] as the CNN's input [N, 1, 8, 8], in batches.
std::vector<std::vector<Tensor>> DigitsBatches(const std::string& file, int64_t batch) {
  const Tensor x = testing::DigitsImages(file, /*cnn=*/true);
  std::vector<std::vector<Tensor>> out;
  const std::vector<Tensor> split = SplitBatches(x, batch).value();
  for (const Tensor& t : split) out.push_back({t});
  return out;
}

SensitivityOptions QuietDigits() {
  SensitivityOptions o;
  o.progress = [](int64_t, int64_t) {};
  o.latency_runs = 3;
  return o;
}

void Print(const char* label, const SensitivityReport& r) {
  std::printf("sensitivity digits_cnn (%s): float %.4f, all int8 %.4f, %lld evaluations\n", label, r.float_value,
              r.all_quantized, static_cast<long long>(r.evaluations));
  for (const NodeSensitivity& n : r.nodes) {
    std::printf("  %d %-28s %s->%s only %.4f all-but %.4f, int8 %.1f us, float %.1f us\n", n.rank, n.name.c_str(),
                n.op_type.c_str(), n.int8_op_type.c_str(), n.only_this_quantized, n.all_but_this_quantized,
                n.int8_latency_us, n.float_latency_us);
  }
  std::string kept;
  for (const std::string& k : r.keep_float) kept += " " + k;
  std::printf("  target %.4f %s: keep float [%s ] -> %.4f\n", r.target.value_or(NAN),
              r.target_reached ? "reached" : "NOT reachable", kept.c_str(), r.achieved.value_or(NAN));
}

// Output SQNR of the int8 graph that keeps `keep_float` float through the mapping (QConfig None per node name).
double SqnrKeepingFloatByMapping(const Graph& model, const std::vector<std::string>& keep_float,
                                 const std::vector<std::vector<Tensor>>& calib, const std::vector<Tensor>& eval) {
  QConfigMapping mapping = GetDefaultQConfigMapping("x86").value();
  for (const std::string& n : keep_float) mapping.SetModuleName(n, std::nullopt);
  PreparedGraph prepared = Prepare(model, mapping).value();
  const Context context = Context::Create().value();
  testing::CalibrateQuietly(prepared, calib, context);
  const Graph converted = Convert(prepared).value();
  auto run = [&](const Graph& g, const OpRegistry& registry) {
    CompileOptions co;
    co.input_shapes = {{g.value(g.inputs()[0]).name, eval[0].shape()}};
    auto exec = Executor::Compile(g, context, registry, co);
    INFO(exec.status().message());
    REQUIRE(exec.ok());
    return exec->Run(eval).value()[0];
  };
  const Tensor want = run(prepared.graph(), QuantFloatRegistry());
  const Tensor got = run(converted, QuantizedGraphRegistry());
  return Sqnr(want, got).value();
}

TEST_CASE("Sensitivity on the digits CNN: ranking by output SQNR and the nodes to keep float for +3 dB",
          "[sensitivity][onnx]") {
  const Graph model = ReadOnnxModel(kModels + "digits_cnn.onnx").value();
  const auto calib = DigitsBatches("digits_calib_x.npy", 32);
  const auto eval = DigitsBatches("digits_test_x.npy", 360);
  const QConfigMapping mapping = GetDefaultQConfigMapping("x86").value();

  // First without a target, to learn the all-int8 figure; then with a target 3 dB above it.
  const SensitivityReport first = AnalyzeSensitivity(model, mapping, calib, eval, QuietDigits()).value();
  SensitivityOptions o = QuietDigits();
  o.target = first.all_quantized + 3.0;
  auto analysed = AnalyzeSensitivity(model, mapping, calib, eval, o);
  INFO(analysed.status().message());
  REQUIRE(analysed.ok());
  const SensitivityReport& r = *analysed;
  Print("output SQNR dB", r);
  CHECK(r.all_quantized == first.all_quantized);  // calibration and conversion are deterministic
  CHECK(std::isinf(r.float_value));
  CHECK(r.all_quantized > 20.0);  // as quant_convert_digits_test
  // Both convolutions and the classifier are among the candidates, with their int8 operators.
  int weighted = 0;
  for (const NodeSensitivity& n : r.nodes) {
    if (n.op_type == "Conv" || n.op_type == "Gemm") {
      ++weighted;
      CHECK(n.int8_op_type == "Q" + n.op_type);
      CHECK(n.int8_latency_us > 0.0);
      CHECK(n.float_latency_us > 0.0);
    }
    // One node int8 alone loses less than all of them; one node float alone gains something or nothing.
    CHECK(n.only_this_quantized >= r.all_quantized);
    CHECK(n.all_but_this_quantized >= r.all_quantized - 1.0);
  }
  CHECK(weighted == 3);
  for (size_t i = 1; i < r.nodes.size(); ++i) {
    CHECK(r.nodes[i - 1].all_but_this_quantized >= r.nodes[i].all_but_this_quantized);
  }
  REQUIRE(r.target_reached);
  REQUIRE_FALSE(r.keep_float.empty());
  CHECK(r.keep_float.size() < r.nodes.size());
  REQUIRE(r.achieved.has_value());
  CHECK(*r.achieved >= *r.target);
  // The same nodes kept float by the mapping give the same figure (same observers, same data).
  const double by_mapping = SqnrKeepingFloatByMapping(model, r.keep_float, calib, eval[0]);
  std::printf("  the same nodes float by the QConfigMapping: %.4f dB\n", by_mapping);
  CHECK(by_mapping == Approx(*r.achieved).margin(0.05));
}

TEST_CASE("Sensitivity on the digits CNN by accuracy: int8 is within a point, 100% is unreachable",
          "[sensitivity][onnx]") {
  const Graph model = ReadOnnxModel(kModels + "digits_cnn.onnx").value();
  const auto calib = DigitsBatches("digits_calib_x.npy", 32);
  const auto eval = DigitsBatches("digits_test_x.npy", 100);  // 4 batches, the last of 60
  const Tensor labels = ReadNpy(kModels + "digits_test_labels.npy").value();
  SensitivityOptions o = QuietDigits();
  o.metric = AccuracyMetric(labels);
  o.target = 1.0;
  o.latency_runs = 0;
  auto analysed = AnalyzeSensitivity(model, GetDefaultQConfigMapping("x86").value(), calib, eval, o);
  INFO(analysed.status().message());
  REQUIRE(analysed.ok());
  const SensitivityReport& r = *analysed;
  Print("top-1 accuracy", r);
  CHECK(r.metric == "accuracy");
  CHECK(r.float_value > 0.85);  // the committed model: 94.2%
  CHECK(r.float_value < 1.0);
  CHECK(r.all_quantized >= r.float_value - 0.01);
  CHECK_FALSE(r.target_reached);
  CHECK(r.keep_float.size() == r.nodes.size());
  CHECK(r.achieved == r.float_value);

  SECTION("labels that do not match the samples fail, naming the counts") {
    o.metric = AccuracyMetric(Tensor::Create(DType::kS32, Shape{10}).value());
    auto bad = AnalyzeSensitivity(model, GetDefaultQConfigMapping("x86").value(), calib, eval, o);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.status().message(), Catch::Contains("10 labels"));
  }
}

}  // namespace
}  // namespace octet
