// Cross-layer equalization, high-bias absorption and bias correction (quant/equalize.h, quant/bias_correction.h) on a
// small MobileNet-like builder model whose BatchNorms spread the per-channel ranges over decades, with statistics that
// match the data (so the 3-sigma assumption of high-bias absorption holds as it does in a trained network).
#include "quant/equalize.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "core/builder.h"
#include "core/executor.h"
#include "ops/float/registry.h"
#include "quant/batch_norm_stats.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/quantized_registry.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

constexpr int64_t kBatch = 16;

float LogUniform(std::mt19937_64& rng, float decades) {
  return std::pow(10.0f, std::uniform_real_distribution<float>(-decades / 2, decades / 2)(rng));
}

std::vector<std::vector<Tensor>> EqualizeBatches(std::mt19937_64& rng, int count) {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < count; ++i) out.push_back({testing::RandomTensor(rng, Shape{kBatch, 4, 8, 8}, -1.0f, 1.0f)});
  return out;
}

// Sets each BatchNorm, in graph order, from the measured statistics of its input: mean as measured, variance as
// measured times a log-uniform factor over `var_decades` (0: statistics that match the data, as in a trained network),
// gamma log-uniform over three decades, beta = N(beta_mean, 1) times the channel's output scale. `relu6` puts a ReLU6
// (Clip 0..6) after the depthwise conv instead of Relu.
Graph SpreadNet(uint64_t seed, bool relu6, const std::vector<std::vector<Tensor>>& data, float var_decades = 3.0f,
                float beta_mean = 0.5f) {
  GraphBuilder b("spread_net", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kBatch, 4, 8, 8});
  x = b.ReLU("expand.relu", b.BatchNorm2d("expand.bn", b.Conv2d("expand", x, {4, 16, {1, 1}}), 16));
  x = b.Conv2d("dw", x, {16, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 16});
  x = b.BatchNorm2d("dw.bn", x, 16);
  x = relu6 ? b.ReLU6("dw.relu", x) : b.ReLU("dw.relu", x);
  x = b.BatchNorm2d("project.bn", b.Conv2d("project", x, {16, 8, {1, 1}}), 8);
  x = b.ReLU("head.relu", b.BatchNorm2d("head.bn", b.Conv2d("head", x, {8, 24, {1, 1}}), 24));
  x = b.Flatten("flatten", b.AdaptiveAvgPool2d1("pool", x));
  b.Output(b.Linear("fc", x, 24, 5));
  Graph g = std::move(b).Build().value();
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& bn = g.node(i);
    if (bn.op_type != "BatchNormalization") continue;
    const std::string in = g.value(bn.inputs[0]).name;
    const std::vector<Tensor> seen = testing::RunAndRecord(g, FloatOpRegistry(), data, {in})[in];
    const int64_t c = g.value(bn.inputs[1]).data.NumElements();
    std::vector<double> sum(c, 0.0), sq(c, 0.0);
    int64_t count = 0;
    for (const Tensor& t : seen) {
      const int64_t n = t.shape().dim(0), hw = t.NumElements() / (n * c);
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t ch = 0; ch < c; ++ch) {
          for (int64_t j = 0; j < hw; ++j) {
            const double v = t.data<float>()[(k * c + ch) * hw + j];
            sum[ch] += v;
            sq[ch] += v * v;
          }
        }
      }
      count += n * hw;
    }
    std::vector<float> gamma(c), factor(c);
    double rms = 0.0;
    for (int64_t ch = 0; ch < c; ++ch) {
      gamma[ch] = LogUniform(rng, 3.0f);
      factor[ch] = LogUniform(rng, var_decades);
      rms += gamma[ch] * gamma[ch] / factor[ch];
    }
    rms = std::sqrt(rms / c);
    for (int64_t ch = 0; ch < c; ++ch) {
      const double mean = sum[ch] / count, var = std::max(1e-6, sq[ch] / count - mean * mean);
      const float g1 = static_cast<float>(gamma[ch] / rms);
      g.mutable_value(bn.inputs[1]).data.data<float>()[ch] = g1;
      g.mutable_value(bn.inputs[2]).data.data<float>()[ch] = (normal(rng) + beta_mean) * g1 / std::sqrt(factor[ch]);
      g.mutable_value(bn.inputs[3]).data.data<float>()[ch] = static_cast<float>(mean);
      g.mutable_value(bn.inputs[4]).data.data<float>()[ch] = static_cast<float>(var * factor[ch]);
    }
  }
  return g;
}

Tensor RunEqualizeFloat(const Graph& g, const Tensor& x) {
  return testing::RunFirstOutput(g, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1), QuantFloatRegistry(), x);
}

// Output SQNR against `reference` of `graph` statically quantized with `backend`'s preset, calibrated on `calib`
// through `calibrated` (the graph before bias correction; `graph` itself when null).
double QuantizedSqnr(const Graph& reference, const Graph& graph, const std::string& backend,
                     const std::vector<std::vector<Tensor>>& calib, const Tensor& x,
                     const Graph* calibrated = nullptr) {
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  const Graph converted =
      testing::ConvertCalibratedThrough(graph, GetDefaultQConfig(backend).value(), calib, context, calibrated);
  return testing::TensorSqnrDb(RunEqualizeFloat(reference, x),
                               testing::RunFirstOutput(converted, context, QuantizedGraphRegistry(), x));
}

double MaxRelativeError(const Tensor& want, const Tensor& got) {
  double max_abs = 0.0, max_err = 0.0;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(want.data<float>()[i])));
    max_err = std::max(max_err, std::fabs(static_cast<double>(want.data<float>()[i]) - got.data<float>()[i]));
  }
  return max_err / max_abs;
}

TEST_CASE("equalize: CLE is exact in float and balances every pair", "[quant][equalize]") {
  std::mt19937_64 rng = testing::MakeRng("equalize_exact");
  const auto data = EqualizeBatches(rng, 4);
  const Graph original = SpreadNet(1, false, data);
  Graph g = original;
  auto stats = FoldBatchNormKeepingStats(g);
  REQUIRE(stats.ok());
  CHECK(stats->size() == 4);
  EqualizeOptions options;
  options.absorb_high_bias = false;
  auto report = EqualizeCrossLayer(g, &*stats, options);
  INFO(report.status().message());
  REQUIRE(report.ok());
  // expand -> dw, dw -> project, project -> head (nothing between), head -> fc (through the pooling head).
  REQUIRE(report->pairs.size() == 4);
  CHECK(report->pairs[0].first == "expand");
  CHECK(report->pairs[1].through == "Relu");
  CHECK(report->pairs[2].through == "nothing");
  CHECK(report->pairs[3].through == "Relu, GlobalAveragePool, Flatten");
  CHECK(report->skipped.empty());
  for (const auto& l : report->layers) {
    INFO(l.node << ": spread " << l.spread_before << " -> " << l.spread_after << ", SQNR " << l.sqnr_db_before << " ("
                << l.worst_channel_sqnr_db_before << ") -> " << l.sqnr_db_after << " (" << l.worst_channel_sqnr_db_after
                << ")");
    if (l.node == "dw") {
      CHECK(l.spread_before > 100.0f);
      CHECK(l.spread_after < l.spread_before / 10.0f);
      CHECK(l.worst_channel_sqnr_db_after > l.worst_channel_sqnr_db_before + 10.0f);
      CHECK(l.sqnr_db_after > l.sqnr_db_before - 3.0f);  // the large channels pay a little
    }
  }
  // Float rounding only: each sweep multiplies and divides by the same factors.
  const Tensor x = data[0][0];
  CHECK(MaxRelativeError(RunEqualizeFloat(original, x), RunEqualizeFloat(g, x)) < 1e-5);
  // Each channel of dw now has the range project reads from it (to the 0.1% the sweeps stop at, plus the pull of the
  // other pair dw is in).
  const Tensor& wdw = g.value(g.node(g.FindNode("dw")).inputs[1]).data;
  const Tensor& wpr = g.value(g.node(g.FindNode("project")).inputs[1]).data;
  for (int64_t c = 0; c < 16; ++c) {
    float r1 = 0.0f, r2 = 0.0f;
    for (int64_t k = 0; k < 9; ++k) r1 = std::max(r1, std::fabs(wdw.data<float>()[c * 9 + k]));
    for (int64_t o = 0; o < 8; ++o) r2 = std::max(r2, std::fabs(wpr.data<float>()[o * 16 + c]));
    INFO("channel " << c);
    CHECK(r1 == Approx(r2).epsilon(0.02));
  }
}

TEST_CASE(
    "equalize: ReLU6 is refused with the reason, or replaced by Relu on "
    "request",
    "[quant][equalize]") {
  std::mt19937_64 rng = testing::MakeRng("equalize_relu6");
  const auto data = EqualizeBatches(rng, 2);
  Graph g = SpreadNet(2, true, data);
  REQUIRE(FoldBatchNormKeepingStats(g).ok());
  Graph refused = g;
  auto report = EqualizeCrossLayer(refused, nullptr);
  REQUIRE(report.ok());
  CHECK(report->pairs.size() == 3);
  REQUIRE(report->skipped.size() == 1);
  CHECK(report->skipped[0].first == "dw");
  CHECK(report->skipped[0].second == "project");
  CHECK_THAT(report->skipped[0].reason,
             Catch::Contains("'dw.relu' clips at 6") && Catch::Contains("--equalize-relu6 relu"));
  EqualizeOptions replace;
  replace.relu6 = Relu6Policy::kReplaceWithRelu;
  auto replaced = EqualizeCrossLayer(g, nullptr, replace);
  REQUIRE(replaced.ok());
  CHECK(replaced->pairs.size() == 4);
  CHECK(replaced->skipped.empty());
  REQUIRE(replaced->relu6_replaced == std::vector<std::string>{"dw.relu"});
  CHECK(g.node(g.FindNode("dw.relu")).op_type == "Relu");
}

TEST_CASE("equalize: ReluOfNormalMean is the clipped normal's mean", "[quant][equalize]") {
  std::mt19937_64 rng = testing::MakeRng("relu_normal_mean");
  for (const auto& [mean, std] : std::vector<std::pair<float, float>>{{0.5f, 1.0f}, {-1.0f, 0.5f}, {2.0f, 0.3f}}) {
    std::normal_distribution<double> normal(mean, std);
    double sum = 0.0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) sum += std::max(0.0, normal(rng));
    INFO("mean " << mean << " std " << std);
    CHECK(ReluOfNormalMean(mean, std) == Approx(sum / n).margin(0.01 * std));
  }
  CHECK(ReluOfNormalMean(-1.0f, 0.0f) == 0.0f);
  CHECK(ReluOfNormalMean(1.5f, 0.0f) == 1.5f);
}

TEST_CASE(
    "equalize: high-bias absorption keeps the float model and narrows "
    "activation ranges",
    "[quant][equalize]") {
  std::mt19937_64 rng = testing::MakeRng("equalize_hba");
  const auto data = EqualizeBatches(rng, 4);
  // Statistics that match the data: the 3-sigma bound high-bias absorption relies on then holds. Betas around 3 gammas:
  // about half the channels have a high bias (mean - 3 std > 0).
  const Graph original = SpreadNet(3, false, data, 0.0f, 3.0f);
  Graph g = original;
  auto stats = FoldBatchNormKeepingStats(g);
  REQUIRE(stats.ok());
  auto report = EqualizeCrossLayer(g, &*stats);
  REQUIRE(report.ok());
  int64_t absorbed = 0;
  for (const auto& p : report->pairs) {
    absorbed += p.absorbed_channels;
    // Not where the second layer pads with zeros (dw): the shift would not reach its borders.
    if (p.second == "dw") CHECK(p.absorbed_channels == 0);
  }
  CHECK(absorbed > 0);
  // Relu(y - h) = Relu(y) - h except where y < mean - 3 std: close, not exact.
  const Tensor x = data[1][0];
  CHECK(testing::TensorSqnrDb(RunEqualizeFloat(original, x), RunEqualizeFloat(g, x)) > 40.0);
}

TEST_CASE("bias correction: per-tensor int8 output gets closer to float", "[quant][equalize]") {
  std::mt19937_64 rng = testing::MakeRng("bias_correction");
  const auto calib = EqualizeBatches(rng, 4);
  const Tensor x = EqualizeBatches(rng, 1)[0][0];
  const Graph original = SpreadNet(4, false, calib, 0.0f);
  Graph folded = original;
  auto stats = FoldBatchNormKeepingStats(folded);
  REQUIRE(stats.ok());
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultQConfig("qnnpack").value());  // per-tensor symmetric weights
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  auto qparams = WeightQParamsByNode(folded, mapping, &context);
  REQUIRE(qparams.ok());
  CHECK(qparams->size() == 5);
  const double plain = QuantizedSqnr(original, folded, "qnnpack", calib, x);

  Graph empirical = folded;
  auto report = CorrectBias(empirical, *qparams, BiasCorrectionMode::kEmpirical, calib, nullptr, context);
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(report->layers.size() == 5);
  const double corrected = QuantizedSqnr(original, empirical, "qnnpack", calib, x, &folded);

  Graph analytic = folded;
  auto areport = CorrectBias(analytic, *qparams, BiasCorrectionMode::kAnalytic, {}, &*stats, context);
  REQUIRE(areport.ok());
  // The first layer reads the graph input (no statistics); the others read folded layers.
  REQUIRE(areport->skipped.size() == 1);
  CHECK(areport->skipped[0].node == "expand");
  const double analytic_sqnr = QuantizedSqnr(original, analytic, "qnnpack", calib, x, &folded);
  INFO("output SQNR: plain " << plain << " dB, empirical " << corrected << " dB, analytic " << analytic_sqnr);
  CHECK(corrected > plain + 1.0);
  CHECK(analytic_sqnr > plain);
}

TEST_CASE("bias correction: the weight error is quantize-dequantize minus the weight", "[quant][equalize]") {
  Tensor w = Tensor::Create(DType::kF32, Shape{2, 3}).value();
  const float values[] = {0.5f, -1.0f, 0.26f, 0.01f, 0.02f, -0.03f};
  std::copy(values, values + 6, w.data<float>());
  const QParams q = QParams::PerTensor(DType::kS8, 0.1f, 0).value();
  const Tensor e = WeightQuantizationError(w, q).value();
  const float want[] = {0.0f, 0.0f, 0.3f - 0.26f, -0.01f, -0.02f, 0.03f};
  for (int i = 0; i < 6; ++i) CHECK(e.data<float>()[i] == Approx(want[i]).margin(1e-6));
}

}  // namespace
}  // namespace octet
