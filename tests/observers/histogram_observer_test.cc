// HistogramObserver beyond the PyTorch 1.13 reference data: the upstream variant against its formulas (no upstream
// torch is available to record data), the differences between the variants, merging, and the search.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "observers/histogram_observer.h"
#include "observers/histogram_search.h"
#include "tests/observers/observer_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kInf;

std::unique_ptr<HistogramObserver> MakeHistogram(HistogramVariant variant, int64_t bins = 2048,
                                                 std::optional<int64_t> upsample = {}) {
  ObserverOptions o;
  o.histogram_variant = variant;
  o.bins = bins;
  o.upsample_rate = upsample;
  auto h = HistogramObserver::Create(o);
  if (!h.ok()) FAIL(h.status().ToString());
  return std::move(h).value();
}

double Total(const std::vector<float>& h) { return std::accumulate(h.begin(), h.end(), 0.0); }

std::vector<float> Uniform(std::mt19937_64& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

TEST_CASE("upstream HistogramObserver histograms the exact range; legacy_1_13 truncates it", "[observers]") {
  auto rng = testing::MakeRng("histogram exact range");
  const auto x = Uniform(rng, 10000, -3.7f, 5.2f);
  auto up = MakeHistogram(HistogramVariant::kUpstream);
  auto legacy = MakeHistogram(HistogramVariant::kLegacy113);
  testing::ObserveOrFail(*up, x);
  testing::ObserveOrFail(*legacy, x);
  CHECK(Total(up->histogram()) == 10000.0);
  CHECK(Total(legacy->histogram()) < 9500.0);  // [-3, 5] only: numerics.md 2.7 (pytorch/pytorch#83672)
  // Upstream bins follow torch.histc over [min, max] exactly.
  const float lo = up->min_val()[0], hi = up->max_val()[0];
  std::vector<float> want(2048, 0.0f);
  for (float v : x) {
    int64_t b = static_cast<int64_t>(((v - lo) / (hi - lo)) * 2048.0f);
    want[static_cast<size_t>(std::min<int64_t>(b, 2047))] += 1.0f;
  }
  CHECK(up->histogram() == want);
}

TEST_CASE("upstream HistogramObserver up-samples the old histogram into the grown range", "[observers]") {
  // 4 bins, 4 sub-bins each: the old range [0, 1] has sub-bin mid-points (k + 0.5) / 16, which fall in the first
  // two bins of [0, 2].
  auto h = MakeHistogram(HistogramVariant::kUpstream, 4, 4);
  testing::ObserveOrFail(*h, {0.0f, 0.1f, 0.3f, 0.3f, 0.6f, 0.9f, 1.0f});  // histc [0, 1]: 2, 2, 1, 2
  REQUIRE(h->histogram() == std::vector<float>{2.0f, 2.0f, 1.0f, 2.0f});
  testing::ObserveOrFail(*h, {2.0f});
  CHECK(h->min_val()[0] == 0.0f);
  CHECK(h->max_val()[0] == 2.0f);
  CHECK(h->histogram() == std::vector<float>{4.0f, 3.0f, 0.0f, 1.0f});
  // Within the current range the counts add.
  testing::ObserveOrFail(*h, {1.9f, 0.2f});
  CHECK(h->histogram() == std::vector<float>{5.0f, 3.0f, 0.0f, 2.0f});
}

TEST_CASE("upstream HistogramObserver moves a constant histogram whole into its bin", "[observers]") {
  auto h = MakeHistogram(HistogramVariant::kUpstream, 4, 16);
  testing::ObserveOrFail(*h, std::vector<float>(5, 0.5f));  // histc falls back to [-0.5, 1.5]: bin 2
  CHECK(h->histogram() == std::vector<float>{0.0f, 0.0f, 5.0f, 0.0f});
  testing::ObserveOrFail(*h, {0.0f, 1.0f});  // [0, 1]: the 5 land in bin 2 of the new range, with 0 and 1
  CHECK(h->histogram() == std::vector<float>{1.0f, 0.0f, 5.0f, 1.0f});
  // legacy_1_13 starts over after a constant state (same_values), dropping the earlier mass.
  auto legacy = MakeHistogram(HistogramVariant::kLegacy113, 4, 16);
  testing::ObserveOrFail(*legacy, std::vector<float>(5, 0.5f));
  testing::ObserveOrFail(*legacy, {0.0f, 1.0f});
  CHECK(Total(legacy->histogram()) == 2.0);
}

TEST_CASE("upstream HistogramObserver drops ±Inf and counts them; NaN stays an error", "[observers]") {
  auto h = MakeHistogram(HistogramVariant::kUpstream);
  testing::ObserveOrFail(*h, {1.0f, kInf, -2.0f, -kInf});
  CHECK(h->num_skipped() == 2);
  CHECK(h->min_val()[0] == -2.0f);
  CHECK(h->max_val()[0] == 1.0f);
  CHECK(Total(h->histogram()) == 2.0);
  const Status s = h->Observe(testing::TensorOf({1.0f, std::nanf("")}), "act");
  CHECK_THAT(s.message(), Catch::Contains("'act'") && Catch::Contains("NaN"));
  // Only infinities: nothing to observe.
  auto only_inf = MakeHistogram(HistogramVariant::kUpstream);
  testing::ObserveOrFail(*only_inf, {kInf, -kInf});
  CHECK_FALSE(only_inf->has_observations());
  // legacy_1_13 fails on them (PyTorch 1.13's histc rejects a non-finite range).
  auto legacy = MakeHistogram(HistogramVariant::kLegacy113);
  CHECK_FALSE(legacy->Observe(testing::TensorOf({1.0f, kInf}), "act").ok());
}

TEST_CASE("upstream HistogramObserver keeps every sample's mass as the range grows and shrinks", "[observers]") {
  auto rng = testing::MakeRng("histogram mass");
  auto h = MakeHistogram(HistogramVariant::kUpstream);
  double n = 0;
  for (int b = 0; b < 10; ++b) {
    const float s = std::exp2(static_cast<float>(static_cast<int>(rng() % 8) - 3));
    auto x = Uniform(rng, 500 + 100 * static_cast<size_t>(b), -s, 2.0f * s);
    testing::ObserveOrFail(*h, x);
    n += static_cast<double>(x.size());
    // The first re-binning divides integer counts by 16 and sums them: exact. Later ones split masses that already
    // carry fractions, and the float32 sums (PyTorch's bincount accumulates in float32 too) round once a bin needs
    // more than 24 significant bits: then the total may drift by a few float32 ulps of n per re-binning.
    if (b <= 1) {
      CHECK(Total(h->histogram()) == n);
    } else {
      CHECK(std::fabs(Total(h->histogram()) - n) <= n * 0x1p-24 * 16.0 * b);
    }
  }
  auto q = h->CalculateQParams();
  REQUIRE(q.ok());
  CHECK(q->scale() > 0.0f);
}

TEST_CASE("HistogramObserver ranges: the L2 search clips outliers only where it pays", "[observers]") {
  auto rng = testing::MakeRng("histogram outlier");
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(100000);
  for (auto& v : x) v = normal(rng);
  for (HistogramVariant variant : {HistogramVariant::kUpstream, HistogramVariant::kLegacy113}) {
    auto h = MakeHistogram(variant);
    testing::ObserveOrFail(*h, x);
    auto mm = testing::MakeOrFail(ObserverKind::kMinMax);
    testing::ObserveOrFail(*mm, x);
    auto qh = h->CalculateQParams();
    auto qm = mm->CalculateQParams();
    REQUIRE(qh.ok());
    REQUIRE(qm.ok());
    INFO(HistogramVariantName(variant));
    // Gaussian tails are clipped: a smaller scale than MinMax, but not absurdly so.
    CHECK(qh->scale() < qm->scale());
    CHECK(qh->scale() > 0.5f * qm->scale());
  }
}

TEST_CASE("the L2 quantization error grows when the range clips mass", "[observers]") {
  // Mass in the middle bins: clipping into them costs more than keeping the full range's resolution loss.
  std::vector<float> h(64, 0.0f);
  for (int i = 16; i < 48; ++i) h[static_cast<size_t>(i)] = 100.0f;
  const double full = HistogramQuantizationError(h, -1.0f, 1.0f, 0, 63, 256.0);
  const double tight = HistogramQuantizationError(h, -1.0f, 1.0f, 16, 47, 256.0);
  const double clipped = HistogramQuantizationError(h, -1.0f, 1.0f, 24, 39, 256.0);
  CHECK(tight < full);
  CHECK(clipped > tight);
  const HistogramRange r = NonLinearParamSearch(h, -1.0f, 1.0f, 256.0);
  CHECK(r.min >= -0.55f);
  CHECK(r.max <= 0.55f);
  CHECK(r.min < r.max);
}

TEST_CASE("HistogramObserver merges by re-binning both histograms onto the union range", "[observers]") {
  auto rng = testing::MakeRng("histogram merge");
  for (HistogramVariant variant : {HistogramVariant::kUpstream, HistogramVariant::kLegacy113}) {
    INFO(HistogramVariantName(variant));
    auto a = MakeHistogram(variant, 2048, 16);
    auto b = MakeHistogram(variant, 2048, 16);
    testing::ObserveOrFail(*a, Uniform(rng, 3000, -1.0f, 1.0f));
    testing::ObserveOrFail(*b, Uniform(rng, 2000, -0.5f, 4.0f));
    const double ta = Total(a->histogram()), tb = Total(b->histogram());
    const float lo = std::min(a->min_val()[0], b->min_val()[0]);
    auto empty = MakeHistogram(variant, 2048, 16);
    REQUIRE(empty->Merge(*a).ok());
    CHECK(empty->histogram() == a->histogram());
    REQUIRE(a->Merge(*b).ok());
    CHECK(a->min_val()[0] == lo);
    CHECK(a->max_val()[0] == b->max_val()[0]);
    CHECK(Total(a->histogram()) == ta + tb);
    CHECK(a->CalculateQParams().ok());
  }
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

TEST_CASE("HistogramObserver: split-and-merge equals one pass when every shard spans the whole range",
          "[observers]") {
  // Every batch holds both ends of [-2.5, 3.75], so no shard ever re-bins and counts just add, in one pass and in
  // a merge alike (the range's width 6.25 divides exactly into bins * upsample_rate cells, so 1.13's _adjust_min_max
  // keeps the range too). Outside this case the histograms depend on the order by design (see the header).
  auto rng = testing::MakeRng("histogram split merge");
  for (HistogramVariant variant : {HistogramVariant::kUpstream, HistogramVariant::kLegacy113}) {
    INFO(HistogramVariantName(variant));
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<std::vector<float>> batches;
      for (int b = 0; b < 7; ++b) {
        auto x = Uniform(rng, 100 + rng() % 900, -2.5f, 3.75f);
        // Two distinct positions: were they the same, the batch would lack one end and the shards would re-bin.
        const size_t lo_at = rng() % x.size();
        const size_t hi_at = (lo_at + 1 + rng() % (x.size() - 1)) % x.size();
        x[lo_at] = -2.5f;
        x[hi_at] = 3.75f;
        batches.push_back(std::move(x));
      }
      auto one = MakeHistogram(variant);
      for (const auto& b : batches) testing::ObserveOrFail(*one, b);
      const size_t shards = 2 + rng() % 3;
      std::vector<std::unique_ptr<HistogramObserver>> parts;
      for (size_t s = 0; s < shards; ++s) parts.push_back(MakeHistogram(variant));
      for (size_t b = 0; b < batches.size(); ++b) testing::ObserveOrFail(*parts[(b + trial) % shards], batches[b]);
      std::shuffle(parts.begin(), parts.end(), rng);
      for (size_t s = 1; s < shards; ++s) REQUIRE(parts[0]->Merge(*parts[s]).ok());
      CHECK(parts[0]->histogram() == one->histogram());
      CHECK(parts[0]->min_val() == one->min_val());
      CHECK(parts[0]->max_val() == one->max_val());
      CHECK(parts[0]->num_batches() == one->num_batches());
      auto qa = parts[0]->CalculateQParams();
      auto qb = one->CalculateQParams();
      REQUIRE(qa.ok());
      REQUIRE(qb.ok());
      CHECK(qa->scales() == qb->scales());
      CHECK(qa->zero_points() == qb->zero_points());
      // Not vacuous: the counts are spread over many bins (legacy_1_13 drops what lies outside [-2, 3]).
      CHECK(std::count_if(one->histogram().begin(), one->histogram().end(), [](float c) { return c > 0; }) > 200);
    }
  }
}

}  // namespace
}  // namespace octet
