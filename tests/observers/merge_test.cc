// Split-and-merge equals one pass: the observers whose summaries are exact (min/max, per-channel min/max, and the
// power-of-two histograms of percentile / entropy / MSE / pow2_histogram) give the same state and qparams whatever the batching,
// the sharding and the merge order. Moving averages and HistogramObserver are order-dependent by their mathematics
// (their headers say why); their merge rules are tested with their observers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "observers/observer_factory.h"
#include "tests/observers/observer_test_util.h"

namespace octet {
namespace {

Tensor Batch(ObserverKind kind, const std::vector<float>& v) {
  if (IsPerChannelKind(kind)) return testing::TensorOf(v, Shape{4, static_cast<int64_t>(v.size() / 4)});
  return testing::TensorOf(v);
}

// The state without the batch counter (batching changes how many tensors were seen, not the summary).
nlohmann::json Summary(const Observer& o) {
  nlohmann::json s = o.SaveState();
  s["state"].erase("num_batches");
  return s;
}

TEST_CASE("split-and-merge equals one pass for order-independent observers", "[observers]") {
  auto rng = testing::MakeRng("split and merge");
  std::vector<ObserverKind> kinds;
  for (ObserverKind k : {ObserverKind::kMinMax, ObserverKind::kPerChannelMinMax, ObserverKind::kPercentile,
                         ObserverKind::kEntropy, ObserverKind::kMse, ObserverKind::kPow2Histogram}) {
    if (MakeObserver(k).ok()) kinds.push_back(k);
  }
  REQUIRE(kinds.size() >= 2);
  for (ObserverKind kind : kinds) {
    for (int trial = 0; trial < 6; ++trial) {
      INFO(ObserverKindName(kind) << " trial " << trial);
      // Batches whose range grows and shrinks, including tiny and huge magnitudes and all-zero batches.
      std::vector<std::vector<float>> batches;
      const int nb = 3 + static_cast<int>(rng() % 6);
      for (int b = 0; b < nb; ++b) {
        std::vector<float> v = testing::AssortedFloats(rng, 4 * (1 + rng() % 300));
        const float scale = std::exp2(static_cast<float>(static_cast<int>(rng() % 40) - 20));
        for (float& x : v) x *= scale;
        if (rng() % 7 == 0) std::fill(v.begin(), v.end(), 0.0f);
        batches.push_back(std::move(v));
      }
      ObserverOptions options;
      if (trial % 2 == 1) {
        options.dtype = DType::kS8;
        options.qscheme = IsPerChannelKind(kind) ? QScheme::kPerChannelSymmetric : QScheme::kPerTensorSymmetric;
      }
      auto one = testing::MakeOrFail(kind, options);
      for (const auto& b : batches) testing::ObserveOrFail(*one, Batch(kind, b));

      // Shards of consecutive or shuffled batches, merged in a random order.
      std::vector<size_t> order(batches.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::shuffle(order.begin(), order.end(), rng);
      const size_t shards = 1 + rng() % std::min<size_t>(4, batches.size());
      std::vector<std::unique_ptr<Observer>> parts;
      for (size_t s = 0; s < shards; ++s) parts.push_back(testing::MakeOrFail(kind, options));
      for (size_t i = 0; i < order.size(); ++i) {
        testing::ObserveOrFail(*parts[i % shards], Batch(kind, batches[order[i]]));
      }
      std::shuffle(parts.begin(), parts.end(), rng);
      // Pairwise tree merge.
      while (parts.size() > 1) {
        std::vector<std::unique_ptr<Observer>> next;
        for (size_t i = 0; i + 1 < parts.size(); i += 2) {
          REQUIRE(parts[i]->Merge(*parts[i + 1]).ok());
          next.push_back(std::move(parts[i]));
        }
        if (parts.size() % 2 == 1) next.push_back(std::move(parts.back()));
        parts = std::move(next);
      }
      const Observer& merged = *parts[0];
      CHECK(Summary(merged) == Summary(*one));
      CHECK(merged.num_batches() == one->num_batches());
      auto qa = merged.CalculateQParams();
      auto qb = one->CalculateQParams();
      REQUIRE(qa.ok());
      REQUIRE(qb.ok());
      CHECK(qa->scales() == qb->scales());
      CHECK(qa->zero_points() == qb->zero_points());
    }
  }
}

}  // namespace
}  // namespace octet
