// The numeric guard after Convert (numeric_suite/quantization_guard.h) on a small builder CNN: quiet on a healthy
// 8-bit quantization; a deliberately broken one (2-bit activations on conv1, then everywhere) fails it with
// the broken layer named first by shadow SQNR, and the fixes measured (8-bit everywhere passes); the held-back
// split; the JSON round trip and the text.
#include <catch2/catch.hpp>

#include <algorithm>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/builder.h"
#include "numeric_suite/quantization_guard.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/dynamic.h"
#include "quant/prepare.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::MakeRng;
using testing::RandomTensor;

struct Quantized {
  PreparedGraph prepared;
  Graph graph;
};

Quantized QuantizeWith(const Graph& float_graph, const QConfigMapping& mapping,
                       std::span<const std::vector<Tensor>> calibration) {
  auto prepared = Prepare(float_graph, mapping);
  INFO(prepared.status().message());
  REQUIRE(prepared.ok());
  testing::CalibrateQuietly(*prepared, calibration, Context::Create().value());
  auto graph = Convert(*prepared);
  INFO(graph.status().message());
  REQUIRE(graph.ok());
  return {std::move(*prepared), std::move(*graph)};
}

std::vector<std::vector<Tensor>> Batches(std::mt19937_64& rng, int n) {
  std::vector<std::vector<Tensor>> batches;
  for (int b = 0; b < n; ++b) batches.push_back({RandomTensor(rng, Shape{4, 3, 8, 8}, -1.0f, 1.0f)});
  return batches;
}

TEST_CASE("Guard: quiet on an 8-bit quantization, held-back samples", "[numeric_suite]") {
  auto rng = MakeRng("guard quiet");
  const Graph float_graph = testing::SmallCnn(rng());
  const auto batches = Batches(rng, 10);
  const GuardSplit split = SplitGuardBatches(batches);
  CHECK(split.source == "held-back");
  CHECK(split.calibration.size() == 8);
  CHECK(split.guard.size() == 2);
  CHECK(split.guard.data() == batches.data() + 8);
  QConfigMapping mapping;
  mapping.SetGlobal(testing::MinMaxPerChannelQConfig());
  const Quantized q = QuantizeWith(float_graph, mapping, split.calibration);
  auto report = CheckQuantization(float_graph, q.graph, split.guard, split.source);
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(report->passed);
  CHECK(report->samples == 8);
  REQUIRE(report->outputs.size() == 1);
  CHECK(report->outputs[0].name == "fc2");
  INFO("output SQNR " << report->outputs[0].sqnr_db);
  CHECK(report->outputs[0].sqnr_db > 18.0);  // 20-46 dB over 100 runner seeds
  CHECK(report->worst_sqnr_db == report->outputs[0].sqnr_db);
  CHECK(report->worst_by_shadow.empty());  // a passing guard names no layer
  CHECK(FormatGuardReport(*report).rfind("guard: passed", 0) == 0);

  // Few batches: the calibration set itself.
  const GuardSplit small = SplitGuardBatches(std::span(batches).first(4));
  CHECK(small.source == "calibration");
  CHECK(small.calibration.size() == 4);
  CHECK(small.guard.size() == 4);
}

TEST_CASE("Guard: 2-bit activations on one layer are caught and named; fixes are measured", "[numeric_suite]") {
  auto rng = MakeRng("guard broken layer");
  const Graph float_graph = testing::SmallCnn(rng());
  const auto batches = Batches(rng, 10);
  const GuardSplit split = SplitGuardBatches(batches);
  QConfigMapping mapping;
  mapping.SetGlobal(testing::MinMaxPerChannelQConfig());
  mapping.SetModuleName("conv1", testing::MinMaxPerChannelQConfig(2));
  const Quantized q = QuantizeWith(float_graph, mapping, split.calibration);
  // Over 100 runner seeds this random CNN gave 7-20 dB with 2-bit activations on conv1 alone (and mostly 27-46 dB
  // with 8 bits, above); a 24 dB threshold is clear of the broken figures.
  GuardOptions options;
  options.min_sqnr_db = 24.0;
  auto report = CheckQuantization(float_graph, q.graph, split.guard, split.source, options);
  INFO(report.status().message());
  REQUIRE(report.ok());
  INFO("output SQNR " << report->worst_sqnr_db);
  CHECK_FALSE(report->passed);
  CHECK(report->worst_sqnr_db < options.min_sqnr_db);
  REQUIRE_FALSE(report->worst_by_shadow.empty());
  CHECK(report->worst_by_shadow[0].node == "conv1");
  CHECK(report->worst_by_shadow[0].op == "QConv");
  CHECK(report->worst_by_shadow.size() <= static_cast<size_t>(options.worst_layers));
  for (size_t i = 1; i < report->worst_by_shadow.size(); ++i) {
    CHECK(*report->worst_by_shadow[i - 1].shadow_sqnr_db <= *report->worst_by_shadow[i].shadow_sqnr_db);
  }
  for (size_t i = 0; i < report->worst_by_clipping.size(); ++i) {
    CHECK(*report->worst_by_clipping[i].clipped_fraction > options.min_clipped_fraction);
    if (i > 0)
      CHECK(*report->worst_by_clipping[i - 1].clipped_fraction >= *report->worst_by_clipping[i].clipped_fraction);
  }

  GuardFixCandidates candidates;
  candidates.calibrated = &q.prepared;
  QConfigMapping all_8bit;
  all_8bit.SetGlobal(testing::MinMaxPerChannelQConfig());
  candidates.alternatives.push_back({"8-bit everywhere", all_8bit});
  candidates.calibration_batches = split.calibration;
  REQUIRE(MeasureGuardFixes(float_graph, split.guard, candidates, options, *report).ok());
  REQUIRE(report->fixes.size() >= 2);
  CHECK(report->fixes[0].option == "8-bit everywhere");
  INFO("8-bit everywhere: " << report->fixes[0].sqnr_db << " dB");
  // 8-bit activations everywhere is measured better than the broken model; whether it clears 24 dB depends on the
  // random CNN (a clang run's seed gave 23.2 dB), so the text is checked for the case that happened.
  CHECK(report->fixes[0].sqnr_db > report->worst_sqnr_db);
  // Keeping conv1 float is measured too; it cannot pass here, since its output still feeds the int8 pool at the
  // 2-bit qparams its observer gave: the measurement says so instead of guessing.
  CHECK(report->fixes[1].option == "--skip conv1");
  for (const GuardFix& fix : report->fixes) CHECK(fix.passes == (fix.sqnr_db >= options.min_sqnr_db));

  const std::string text = FormatGuardReport(*report);
  INFO(text);
  CHECK(text.rfind("warning: guard: output SQNR", 0) == 0);
  CHECK(text.find("conv1 (QConv): shadow SQNR") != std::string::npos);
  const bool any_passes =
      std::any_of(report->fixes.begin(), report->fixes.end(), [](const GuardFix& f) { return f.passes; });
  if (report->fixes[0].passes) {
    CHECK(text.find("fix: quantize again with 8-bit everywhere") != std::string::npos);
  } else if (any_passes) {
    CHECK(text.find("fix: quantize again with --skip") != std::string::npos);
  } else {
    CHECK(text.find("no measured fix reaches the threshold") != std::string::npos);
  }

  // The JSON round trip keeps every figure.
  const nlohmann::json j = GuardReportJson(*report);
  CHECK(j["passed"] == false);
  CHECK(j["worst_by_shadow"][0]["node"] == "conv1");
  auto back = GuardReportFromJson(nlohmann::json::parse(j.dump()));
  INFO(back.status().message());
  REQUIRE(back.ok());
  CHECK(FormatGuardReport(*back) == text);
  CHECK(GuardReportJson(*back) == j);
  CHECK_FALSE(GuardReportFromJson(nlohmann::json::parse(R"({"passed": true})")).ok());
}

TEST_CASE("Guard: 2-bit activations everywhere fail it, and no keep-one-float fix is claimed to pass",
          "[numeric_suite]") {
  auto rng = MakeRng("guard broken everywhere");
  const Graph float_graph = testing::SmallCnn(rng());
  const auto batches = Batches(rng, 6);
  const GuardSplit split = SplitGuardBatches(batches);
  QConfigMapping mapping;
  mapping.SetGlobal(testing::MinMaxPerChannelQConfig(2));
  const Quantized q = QuantizeWith(float_graph, mapping, split.calibration);
  // 1-17 dB over 100 runner seeds (the digits CNN fails the default 15 dB: tests/onnx/run_command_test.sh).
  GuardOptions options;
  options.min_sqnr_db = 24.0;
  auto report = CheckQuantization(float_graph, q.graph, split.guard, split.source, options);
  REQUIRE(report.ok());
  INFO("output SQNR " << report->worst_sqnr_db);
  CHECK_FALSE(report->passed);
  CHECK_FALSE(report->worst_by_shadow.empty());
  GuardFixCandidates candidates;
  candidates.calibrated = &q.prepared;
  REQUIRE(MeasureGuardFixes(float_graph, split.guard, candidates, options, *report).ok());
  CHECK(report->fixes.size() == std::min<size_t>(3, report->worst_by_shadow.size() + report->worst_by_clipping.size()));
  for (const GuardFix& fix : report->fixes) {
    INFO(fix.option << ": " << fix.sqnr_db);
    CHECK(fix.passes == (fix.sqnr_db >= options.min_sqnr_db));
  }
  CHECK(FormatGuardReport(*report).find("fc2") != std::string::npos);
}

// A residual CNN of `blocks` blocks (conv-bn-relu, conv-bn, add, relu), 16 channels on 8x8: with 100 blocks the int8
// graph has 302 compared layers, the size of model the guard and the report must handle (issue 21).
Graph DeepResidualCnn(uint64_t seed, int blocks) {
  GraphBuilder b("deep_residual_cnn", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 16, 8, 8});
  Conv2dOptions c;
  c.in_channels = c.out_channels = 16;
  c.padding = {1, 1};
  for (int i = 0; i < blocks; ++i) {
    auto scope = b.Scope(fmt::format("blocks.{}", i));
    ValueId h = b.ReLU("relu1", b.BatchNorm2d("bn1", b.Conv2d("conv1", x, c), 16));
    h = b.BatchNorm2d("bn2", b.Conv2d("conv2", h, c), 16);
    x = b.ReLU("relu2", b.Add("add", h, x));
  }
  x = b.Flatten("flatten", b.AdaptiveAvgPool2d1("pool", x));
  b.Output(b.Linear("fc", x, 16, 10));
  Graph g = std::move(b).Build().value();
  std::mt19937_64 rng(seed);
  testing::RandomizeBatchNorms(g, rng);
  return g;
}

// Fixed models, not one per runner seed: random deep models do fail the guard at times, rightly (seeds 1 and 3 give
// ~10 dB with the logits clipped by 20-30% on the held-back samples: the default histogram observer fitted their
// range too tightly), and that is what the second case checks: caught, fc named, and the measured minmax fix passes.
void CheckDeep(uint64_t seed, bool healthy) {
  std::mt19937_64 rng(seed);
  const Graph float_graph = DeepResidualCnn(rng(), 100);
  std::vector<std::vector<Tensor>> batches;
  for (int b = 0; b < 10; ++b) batches.push_back({RandomTensor(rng, Shape{16, 16, 8, 8}, -2.0f, 2.0f)});
  const GuardSplit split = SplitGuardBatches(batches);
  REQUIRE(split.source == "held-back");
  const Quantized q = QuantizeWith(float_graph, GetDefaultQConfigMapping("x86").value(), split.calibration);
  auto report = CheckQuantization(float_graph, q.graph, split.guard, split.source);
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(report->samples == 32);
  if (healthy) {
    INFO(FormatGuardReport(*report));
    CHECK(report->passed);
    return;
  }
  CHECK_FALSE(report->passed);
  REQUIRE_FALSE(report->worst_by_shadow.empty());
  CHECK(report->worst_by_shadow[0].node == "fc");
  GuardFixCandidates candidates;
  candidates.calibrated = &q.prepared;
  QConfig minmax = GetDefaultQConfig("x86").value();
  minmax.activation.kind = ObserverKind::kMinMax;
  minmax.activation.options.histogram_variant = {};
  QConfigMapping mapping;
  mapping.SetGlobal(minmax);
  candidates.alternatives.push_back({"--activation-observer minmax", mapping});
  candidates.calibration_batches = split.calibration;
  REQUIRE(MeasureGuardFixes(float_graph, split.guard, candidates, {}, *report).ok());
  INFO(FormatGuardReport(*report));
  REQUIRE_FALSE(report->fixes.empty());
  CHECK(report->fixes[0].option == "--activation-observer minmax");
  CHECK(report->fixes[0].passes);
}

// The 302-layer models take 1-3 s natively but minutes under qemu: their own tag, run natively (with and without the
// sanitizers), not under the aarch64 emulation (tests/CMakeLists.txt); the small guard cases above run everywhere.
TEST_CASE("Guard: quiet on a 100-block residual CNN (302 layers) with the default x86 QConfig", "[guard_deep]") {
  CheckDeep(2, true);
}

TEST_CASE("Guard: a 100-block residual CNN whose logits the histogram observer clips is caught and fixed",
          "[guard_deep]") {
  CheckDeep(1, false);
}

TEST_CASE("Guard: dynamic quantization and errors", "[numeric_suite]") {
  auto rng = MakeRng("guard dynamic");
  const Graph float_graph = testing::SmallCnn(rng());
  const auto batches = Batches(rng, 2);
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultDynamicQConfig(true));
  auto dynamic = QuantizeDynamic(float_graph, mapping);
  REQUIRE(dynamic.ok());
  auto report = CheckQuantization(float_graph, *dynamic, batches, "--calib");
  INFO(report.status().message());
  REQUIRE(report.ok());
  INFO("dynamic output SQNR " << report->worst_sqnr_db);
  CHECK(report->passed);
  CHECK(report->samples == 8);
  CHECK_FALSE(CheckQuantization(float_graph, *dynamic, {}, "held-back").ok());
}

}  // namespace
}  // namespace octet
