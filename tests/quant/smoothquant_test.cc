// SmoothQuant (quant/smoothquant.h): the factors follow the paper's formula from the calibration maxima, the float
// model is unchanged, static int8 gets closer to float on a LayerNorm with outlier channels, and LayerNorms whose
// output feeds anything but MatMul / Gemm weights are left alone with the reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/builder.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/quantized_registry.h"
#include "quant/smoothquant.h"
#include "tests/test_util.h"

namespace octet {
namespace {

constexpr int64_t kT = 24, kD = 16;
constexpr int kOutliers[] = {2, 9};

// x [T, D] -> LayerNormalization (channels 2 and 9 of Scale and B 80x the others) -> two Linear layers (Gemm, as
// q and k read one LayerNorm; their weights' rows for those channels 80x smaller) -> Add; with `residual`, the
// LayerNorm output also feeds the Add (post-LN style).
Graph Model(uint64_t seed, bool residual) {
  GraphBuilder b("ln_linear", seed);
  const ValueId x = b.Input("x", DType::kF32, Shape{kT, kD});
  Tensor gamma = b.UniformTensor(Shape{kD}, 1.0f), beta = b.UniformTensor(Shape{kD}, 0.2f);
  for (int c : kOutliers) {
    gamma.data<float>()[c] = 80.0f * (1.0f + std::fabs(gamma.data<float>()[c]));
    beta.data<float>()[c] *= 80.0f;
  }
  const ValueId ln = b.Op1("LayerNormalization", "ln", {x, b.Constant("ln.weight", gamma), b.Constant("ln.bias", beta)},
                           {{"axis", int64_t{-1}}, {"epsilon", 1e-5f}});
  const ValueId q = b.Linear("q", ln, kD, kD), k = b.Linear("k", ln, kD, kD);
  ValueId y = b.Add("sum", q, k);
  if (residual) y = b.Add("residual", y, ln);
  b.Output(y);
  Graph g = std::move(b).Build().value();
  // As in a trained model, the weights that read the outlier channels are small by the same factor, so the outliers
  // do not dominate the output (make_outlier_encoder.py does the same).
  for (const char* fc : {"q", "k"}) {
    Tensor& w = g.mutable_value(g.node(g.FindNode(fc)).inputs[1]).data;  // [out, in] (transB 1)
    for (int64_t j = 0; j < kD; ++j) {
      for (int c : kOutliers) w.data<float>()[j * kD + c] /= 80.0f;
    }
  }
  return g;
}

std::vector<std::vector<Tensor>> Batches(std::mt19937_64& rng, int n) {
  std::vector<std::vector<Tensor>> batches;
  for (int i = 0; i < n; ++i) batches.push_back({testing::RandomTensor(rng, Shape{kT, kD}, -2.0f, 2.0f)});
  return batches;
}

const Tensor& ConstantOf(const Graph& g, const std::string& node, size_t slot) {
  return g.value(g.node(g.FindNode(node)).inputs[slot]).data;
}

// LayerNorm of one row in double, as the float op computes it up to rounding.
std::vector<double> LayerNormRow(const float* x, const Tensor& gamma, const Tensor& beta) {
  double mean = 0, var = 0;
  for (int64_t c = 0; c < kD; ++c) mean += x[c];
  mean /= kD;
  for (int64_t c = 0; c < kD; ++c) var += (x[c] - mean) * (x[c] - mean);
  var /= kD;
  std::vector<double> y(kD);
  for (int64_t c = 0; c < kD; ++c) {
    y[static_cast<size_t>(c)] = (x[c] - mean) / std::sqrt(var + 1e-5) * gamma.data<float>()[c] + beta.data<float>()[c];
  }
  return y;
}

double StaticSqnrDb(const Graph& g, const std::vector<std::vector<Tensor>>& calib, const Tensor& x) {
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultQConfig("x86").value());
  auto prepared = Prepare(g, mapping);
  REQUIRE(prepared.ok());
  const Context context = testing::ContextFor(Isa::kScalar);
  REQUIRE(Calibrate(*prepared, context, calib).ok());
  auto q = Convert(*prepared);
  REQUIRE(q.ok());
  const Tensor yf = testing::RunFirstOutput(g, context, QuantFloatRegistry(), x);
  const Tensor yq = testing::RunFirstOutput(*q, context, QuantizedGraphRegistry(), x);
  return testing::TensorSqnrDb(yf, yq);
}

TEST_CASE("SmoothQuant factors follow max|X_c|^alpha / max|W_c|^(1-alpha) and keep the float model", "[quant]") {
  auto rng = testing::MakeRng("smoothquant factors");
  const Graph model = Model(rng(), false);
  const auto calib = Batches(rng, 4);
  for (float alpha : {0.5f, 0.8f}) {
    INFO("alpha " << alpha);
    Graph g = model;
    SmoothQuantOptions options;
    options.alpha = alpha;
    auto report = SmoothQuant(g, calib, testing::ContextFor(Isa::kScalar), options);
    REQUIRE(report.ok());
    REQUIRE(report->layers.size() == 1);
    CHECK(report->skipped.empty());
    CHECK(report->layers[0].layer_norm == "ln");
    CHECK(report->layers[0].consumers == std::vector<std::string>{"q", "k"});
    CHECK(report->layers[0].channel_spread_after < report->layers[0].channel_spread_before / 4);
    // The expected factors, from the LayerNorm outputs and weights computed here.
    const Tensor& gamma0 = ConstantOf(model, "ln", 1);
    const Tensor& beta0 = ConstantOf(model, "ln", 2);
    std::vector<double> x_max(kD, 0.0), w_max(kD, 0.0);
    for (const auto& batch : calib) {
      for (int64_t t = 0; t < kT; ++t) {
        const std::vector<double> y = LayerNormRow(batch[0].data<float>() + t * kD, gamma0, beta0);
        for (int64_t c = 0; c < kD; ++c) {
          x_max[static_cast<size_t>(c)] = std::max(x_max[static_cast<size_t>(c)], std::fabs(y[static_cast<size_t>(c)]));
        }
      }
    }
    for (const char* fc : {"q", "k"}) {
      const Tensor& w = ConstantOf(model, fc, 1);  // [out, in] (transB 1)
      for (int64_t j = 0; j < kD; ++j) {
        for (int64_t c = 0; c < kD; ++c) {
          w_max[static_cast<size_t>(c)] =
              std::max(w_max[static_cast<size_t>(c)], double{std::fabs(w.data<float>()[j * kD + c])});
        }
      }
    }
    const Tensor& gamma = ConstantOf(g, "ln", 1);
    const Tensor& beta = ConstantOf(g, "ln", 2);
    const Tensor& wq = ConstantOf(g, "q", 1);
    for (int64_t c = 0; c < kD; ++c) {
      INFO("channel " << c);
      const size_t i = static_cast<size_t>(c);
      const double s = std::pow(x_max[i], alpha) / std::pow(w_max[i], 1.0 - alpha);
      CHECK(gamma.data<float>()[c] == Approx(gamma0.data<float>()[c] / s).epsilon(1e-4));
      CHECK(beta.data<float>()[c] == Approx(beta0.data<float>()[c] / s).epsilon(1e-4));
      CHECK(wq.data<float>()[3 * kD + c] ==
            Approx(ConstantOf(model, "q", 1).data<float>()[3 * kD + c] * s).epsilon(1e-4));
    }
    // The float model is unchanged up to rounding.
    const Tensor x = testing::RandomTensor(rng, Shape{kT, kD}, -2.0f, 2.0f);
    const Context context = testing::ContextFor(Isa::kScalar);
    const Tensor y0 = testing::RunFirstOutput(model, context, QuantFloatRegistry(), x);
    const Tensor y1 = testing::RunFirstOutput(g, context, QuantFloatRegistry(), x);
    CHECK(testing::TensorSqnrDb(y0, y1) > 100.0);
  }
}

TEST_CASE("SmoothQuant improves static int8 SQNR on a LayerNorm with outlier channels", "[quant]") {
  auto rng = testing::MakeRng("smoothquant sqnr");
  const Graph model = Model(rng(), false);
  const auto calib = Batches(rng, 6);
  const Tensor x = testing::RandomTensor(rng, Shape{kT, kD}, -2.0f, 2.0f);
  Graph smoothed = model;
  REQUIRE(SmoothQuant(smoothed, calib, testing::ContextFor(Isa::kScalar)).ok());
  const double before = StaticSqnrDb(model, calib, x), after = StaticSqnrDb(smoothed, calib, x);
  INFO("static int8 SQNR " << before << " dB, with SmoothQuant " << after << " dB");
  CHECK(after > before + 6.0);
}

TEST_CASE("SmoothQuant leaves a LayerNorm alone when its output feeds more than weights, and rejects bad input",
          "[quant]") {
  auto rng = testing::MakeRng("smoothquant skip");
  const Graph model = Model(rng(), true);
  const auto calib = Batches(rng, 2);
  Graph g = model;
  auto report = SmoothQuant(g, calib, testing::ContextFor(Isa::kScalar));
  REQUIRE(report.ok());
  CHECK(report->layers.empty());
  REQUIRE(report->skipped.size() == 1);
  CHECK(report->skipped[0].layer_norm == "ln");
  CHECK_THAT(report->skipped[0].reason, Catch::Contains("'residual'") && Catch::Contains("Add"));
  CHECK(g.ToString() == model.ToString());
  CHECK_THAT(SmoothQuantReportText(*report, 0.5f), Catch::Contains("skipped ln"));

  Graph h = Model(rng(), false);
  SmoothQuantOptions bad;
  bad.alpha = 1.5f;
  auto r = SmoothQuant(h, calib, testing::ContextFor(Isa::kScalar), bad);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("--smoothquant") && Catch::Contains("1.5"));
  r = SmoothQuant(h, {}, testing::ContextFor(Isa::kScalar));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("--calib"));
}

}  // namespace
}  // namespace octet
