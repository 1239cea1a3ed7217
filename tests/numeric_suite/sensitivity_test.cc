// Sensitivity analysis (numeric_suite/sensitivity.h) end to end on the int8 kernels: a builder MLP with one node
// made deliberately sensitive (the digits CNN: tests/onnx/sensitivity_digits_test.cc). Thresholds: the sensitive
// node's all-int8 SQNR is far below 20 dB (its per-tensor weight scale is set by a 1000x outlier, so its other
// weights quantize to zero), while 8-bit MLPs of this size reach well over 20 dB with it kept float.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/builder.h"
#include "numeric_suite/report_validate.h"
#include "numeric_suite/sensitivity.h"
#include "quant/calibrate.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

// x [N, 16] -> fc1+relu -> fc2+relu -> fc3 [N, 4]. fc1's output channel 5 is dead (zero weights, bias -1, then
// Relu), and fc2 reads it with weights of 1000: the float result does not change, but fc2's per-tensor weight
// scale becomes 1000/127 and every other weight of fc2 rounds to zero in int8.
Graph MlpWithSensitiveFc2(uint64_t seed) {
  GraphBuilder b("sensitive_mlp", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 16});
  x = b.ReLU("relu1", b.Linear("fc1", x, 16, 16));
  x = b.ReLU("relu2", b.Linear("fc2", x, 16, 16));
  x = b.Linear("fc3", x, 16, 4);
  b.Output(x);
  Graph g = std::move(b).Build().value();
  Tensor& w1 = g.mutable_value(g.FindValue("fc1.weight")).data;
  Tensor& b1 = g.mutable_value(g.FindValue("fc1.bias")).data;
  for (int64_t j = 0; j < 16; ++j) w1.data<float>()[5 * 16 + j] = 0.0f;
  b1.data<float>()[5] = -1.0f;
  Tensor& w2 = g.mutable_value(g.FindValue("fc2.weight")).data;
  for (int64_t i = 0; i < 16; ++i) w2.data<float>()[i * 16 + 5] = 1000.0f;
  return g;
}

std::vector<std::vector<Tensor>> RandomBatches(std::mt19937_64& rng, int batches, const Shape& shape) {
  std::vector<std::vector<Tensor>> out;
  for (int b = 0; b < batches; ++b) out.push_back({testing::RandomTensor(rng, shape, -2.0f, 2.0f)});
  return out;
}

SensitivityOptions Quiet() {
  SensitivityOptions o;
  o.progress = [](int64_t, int64_t) {};
  o.latency_runs = 3;
  return o;
}

SensitivityReport MustAnalyze(const Graph& g, const QConfigMapping& m, const std::vector<std::vector<Tensor>>& calib,
                              const std::vector<std::vector<Tensor>>& eval, const SensitivityOptions& o) {
  auto r = AnalyzeSensitivity(g, m, calib, eval, o);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(*r);
}

const NodeSensitivity& NodeNamed(const SensitivityReport& r, const std::string& name) {
  for (const NodeSensitivity& n : r.nodes) {
    if (n.name == name) return n;
  }
  FAIL("no node " << name << " in the report");
  return r.nodes.front();
}

void CheckRanking(const SensitivityReport& r) {
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    CHECK(r.nodes[i].rank == static_cast<int>(i) + 1);
    if (i > 0 && r.higher_is_better) CHECK(r.nodes[i - 1].all_but_this_quantized >= r.nodes[i].all_but_this_quantized);
    if (i > 0 && !r.higher_is_better) CHECK(r.nodes[i - 1].all_but_this_quantized <= r.nodes[i].all_but_this_quantized);
  }
}

TEST_CASE("Sensitivity: the node with an outlier weight under per-tensor int8 ranks first and is kept float",
          "[sensitivity]") {
  std::mt19937_64 rng = testing::MakeRng("sensitivity_mlp");
  const Graph g = MlpWithSensitiveFc2(rng());
  const auto calib = RandomBatches(rng, 4, Shape{32, 16});
  const auto eval = RandomBatches(rng, 2, Shape{50, 16});
  SensitivityOptions o = Quiet();
  o.target = 20.0;
  const SensitivityReport r = MustAnalyze(g, testing::QnnpackMinMaxMapping(), calib, eval, o);
  for (const NodeSensitivity& n : r.nodes) {
    std::printf("sensitivity mlp: %d %s %s->%s only %.2f all-but %.2f dB, int8 %.1f us, float %.1f us\n", n.rank,
                n.name.c_str(), n.op_type.c_str(), n.int8_op_type.c_str(), n.only_this_quantized,
                n.all_but_this_quantized, n.int8_latency_us, n.float_latency_us);
  }
  std::printf("sensitivity mlp: all int8 %.2f dB, keep float %zu node(s), achieved %.2f dB\n", r.all_quantized,
              r.keep_float.size(), r.achieved.value_or(NAN));
  CHECK(r.metric == "output_sqnr_db");
  // Every quantized node is a candidate: the three fused Linear+Relu (Gemm) nodes.
  REQUIRE(r.nodes.size() == 3);
  CHECK(r.nodes[0].name == "fc2");
  CHECK(r.nodes[0].op_type == "Gemm");
  CHECK(r.nodes[0].int8_op_type == "QGemm");
  CheckRanking(r);
  // Every node float is the float graph itself: exact.
  CHECK(std::isinf(r.float_value));
  CHECK(r.float_value > 0);
  // Over 150 random seeds: all int8 and fc2 alone int8 at most 10.2 dB; fc1 or fc3 alone, and all but fc2, at
  // least 23.9 dB.
  CHECK(r.all_quantized < 16.0);
  CHECK(NodeNamed(r, "fc2").all_but_this_quantized > 20.0);
  CHECK(NodeNamed(r, "fc2").only_this_quantized < 16.0);
  CHECK(NodeNamed(r, "fc1").only_this_quantized > 20.0);
  CHECK(NodeNamed(r, "fc3").only_this_quantized > 20.0);
  // The proposal: fc2 alone reaches 20 dB.
  REQUIRE(r.target_reached);
  CHECK(r.keep_float == std::vector<std::string>{"fc2"});
  REQUIRE(r.achieved.has_value());
  CHECK(*r.achieved == NodeNamed(r, "fc2").all_but_this_quantized);
  CHECK(*r.achieved >= 20.0);
  // Latency from the kernels, one thread.
  for (const NodeSensitivity& n : r.nodes) {
    CHECK(n.int8_latency_us >= 0.0);
    CHECK(n.float_latency_us >= 0.0);
  }

  SECTION("the same report as JSON (schema 1's sensitivity section)") {
    const nlohmann::json j = SensitivityJson(r);
    CHECK(j.at("metric") == "output_sqnr_db");
    CHECK(j.at("float").is_null());  // +inf: exact
    CHECK(j.at("target") == 20.0);
    CHECK(j.at("all_quantized") == r.all_quantized);
    REQUIRE(j.at("nodes").size() == 3);
    CHECK(j.at("nodes")[0].at("name") == "fc2");
    CHECK(j.at("nodes")[0].at("op") == "Gemm");
    CHECK(j.at("nodes")[0].at("rank") == 1);
    CHECK(j.at("nodes")[0].at("int8_latency_us").is_number());
    CHECK(j.at("keep_float") == nlohmann::json::array({"fc2"}));
    CHECK(j.at("achieved") == *r.achieved);
    CHECK(j.at("target_reached") == true);
    // A whole report holding it passes the schema-1 validator.
    nlohmann::json report = {{"schema_version", 1},
                             {"weights", nlohmann::json::array()},
                             {"activations", nlohmann::json::array()},
                             {"shadow", nlohmann::json::array()},
                             {"sensitivity", j}};
    const Status valid = ValidateReportJson(report);
    INFO(valid.message());
    CHECK(valid.ok());
  }
}

TEST_CASE("Sensitivity: targets already met, unreachable targets, node subsets and user metrics", "[sensitivity]") {
  std::mt19937_64 rng = testing::MakeRng("sensitivity_mlp_targets");
  const Graph g = MlpWithSensitiveFc2(rng());
  const auto calib = RandomBatches(rng, 2, Shape{32, 16});
  const auto eval = RandomBatches(rng, 1, Shape{40, 16});
  const QConfigMapping mapping = testing::QnnpackMinMaxMapping();

  SECTION("a target the all-int8 graph meets keeps nothing float") {
    SensitivityOptions o = Quiet();
    o.target = -100.0;
    const SensitivityReport r = MustAnalyze(g, mapping, calib, eval, o);
    CHECK(r.target_reached);
    CHECK(r.keep_float.empty());
    CHECK(r.achieved == r.all_quantized);
  }
  SECTION("a target even the analysed nodes float cannot reach is reported as such") {
    // Only fc1 and fc3 analysed: fc2 stays int8 in every configuration, so no set reaches 25 dB.
    SensitivityOptions o = Quiet();
    o.target = 25.0;
    o.nodes = {"fc3", "fc1"};
    o.latency_runs = 0;
    const SensitivityReport r = MustAnalyze(g, mapping, calib, eval, o);
    REQUIRE(r.nodes.size() == 2);
    CHECK(std::isnan(r.nodes[0].int8_latency_us));
    CHECK_FALSE(r.target_reached);
    CHECK(r.keep_float.size() == 2);
    REQUIRE(r.achieved.has_value());
    CHECK(*r.achieved == r.float_value);
    CHECK(*r.achieved < 25.0);
    CHECK(std::isfinite(r.float_value));
    const nlohmann::json j = SensitivityJson(r);
    CHECK(j.at("target_reached") == false);
    CHECK_FALSE(j.at("nodes")[0].contains("int8_latency_us"));
  }
  SECTION("a lower-is-better user metric (max abs output error) ranks the same node first") {
    SensitivityOptions o = Quiet();
    o.metric.name = "max_abs_error";
    o.metric.higher_is_better = false;
    o.metric.evaluate = [](std::span<const std::vector<Tensor>> want,
                           std::span<const std::vector<Tensor>> got) -> Result<double> {
      double worst = 0;
      for (size_t b = 0; b < got.size(); ++b) {
        for (int64_t i = 0; i < got[b][0].NumElements(); ++i) {
          worst = std::max<double>(worst, std::abs(got[b][0].data<float>()[i] - want[b][0].data<float>()[i]));
        }
      }
      return worst;
    };
    o.target = 0.0;  // only the float graph is exact
    const SensitivityReport r = MustAnalyze(g, mapping, calib, eval, o);
    CHECK_FALSE(r.higher_is_better);
    CHECK(r.nodes[0].name == "fc2");
    CheckRanking(r);
    CHECK(r.float_value == 0.0);
    CHECK(r.all_quantized > 0.0);
    REQUIRE(r.target_reached);
    CHECK(r.keep_float.size() == 3);
    CHECK(r.achieved == 0.0);
  }
  SECTION("errors name what is wrong") {
    SensitivityOptions o = Quiet();
    o.nodes = {"fc9"};
    auto r = AnalyzeSensitivity(g, mapping, calib, eval, o);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("'fc9'"));
    o.nodes = {};
    r = AnalyzeSensitivity(g, mapping, calib, {}, o);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("no evaluation batch"));
    o.metric.evaluate = [](auto, auto) -> Result<double> { return NAN; };
    r = AnalyzeSensitivity(g, mapping, calib, eval, o);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("NaN"));
  }
}

}  // namespace
}  // namespace octet
