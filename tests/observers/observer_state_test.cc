// Every observer's state: JSON save / load round trips bit for bit, Clone is independent, and loads and merges of
// incompatible observers fail with clear messages.
#include <catch2/catch.hpp>

#include "observers/observer_factory.h"
#include "tests/observers/observer_test_util.h"

namespace octet {
namespace {

std::vector<ObserverKind> ImplementedKinds() {
  std::vector<ObserverKind> out;
  for (ObserverKind k : kAllObserverKinds) {
    if (MakeObserver(k).ok()) out.push_back(k);
  }
  return out;
}

Tensor BatchFor(ObserverKind kind, std::mt19937_64& rng, size_t n) {
  const auto v = testing::AssortedFloats(rng, n * 6);
  if (IsPerChannelKind(kind)) return testing::TensorOf(v, Shape{6, static_cast<int64_t>(n)});
  return testing::TensorOf(v);
}

void CheckSameQParams(const Observer& a, const Observer& b) {
  auto qa = a.CalculateQParams();
  auto qb = b.CalculateQParams();
  REQUIRE(qa.ok() == qb.ok());
  if (!qa.ok()) return;
  REQUIRE(qa->scales().size() == qb->scales().size());
  for (size_t i = 0; i < qa->scales().size(); ++i) CHECK(testing::SameFloat(qa->scales()[i], qb->scales()[i]));
  CHECK(qa->zero_points() == qb->zero_points());
}

TEST_CASE("observer state round-trips through JSON text", "[observers]") {
  auto rng = testing::MakeRng("observer state");
  const auto kinds = ImplementedKinds();
  REQUIRE(kinds.size() >= 5);
  for (ObserverKind kind : kinds) {
    INFO(ObserverKindName(kind));
    auto o = testing::MakeOrFail(kind);
    // Before any observation, then after a few batches.
    for (int round = 0; round < 2; ++round) {
      const std::string text = o->SaveState().dump();
      auto loaded = ObserverFromState(nlohmann::json::parse(text));
      if (!loaded.ok()) FAIL(loaded.status().ToString());
      CHECK((*loaded)->SaveState().dump() == text);
      CHECK((*loaded)->min_val().size() == o->min_val().size());
      CheckSameQParams(*o, **loaded);
      for (int b = 0; b < 3; ++b) testing::ObserveOrFail(*o, BatchFor(kind, rng, 40 + 20 * static_cast<size_t>(b)));
    }
    // A clone is equal and independent.
    std::unique_ptr<Observer> clone = o->Clone();
    CHECK(clone->SaveState() == o->SaveState());
    testing::ObserveOrFail(*clone, BatchFor(kind, rng, 10));
    CHECK(clone->num_batches() == o->num_batches() + 1);
  }
}

TEST_CASE("observer state loads only into a matching observer and rejects corrupt state", "[observers]") {
  auto rng = testing::MakeRng("observer state errors");
  for (ObserverKind kind : ImplementedKinds()) {
    INFO(ObserverKindName(kind));
    auto o = testing::MakeOrFail(kind);
    testing::ObserveOrFail(*o, BatchFor(kind, rng, 50));
    const nlohmann::json state = o->SaveState();

    ObserverOptions other;
    other.dtype = DType::kS8;
    auto different = testing::MakeOrFail(kind, other);
    Status s = different->LoadState(state);
    CHECK_THAT(s.message(), Catch::Contains("options"));

    const ObserverKind wrong_kind = kind == ObserverKind::kMinMax ? ObserverKind::kMse : ObserverKind::kMinMax;
    if (MakeObserver(wrong_kind).ok()) {
      auto wrong = testing::MakeOrFail(wrong_kind);
      CHECK_THAT(wrong->LoadState(state).message(), Catch::Contains("the state is of a"));
    }
    // Corrupt fields leave the observer reset.
    nlohmann::json bad = state;
    bad["state"]["num_batches"] = -1;
    CHECK_FALSE(o->LoadState(bad).ok());
    for (const char* key : {"min_val", "max_val"}) {
      bad = state;
      bad["state"].erase(key);
      auto fresh = testing::MakeOrFail(kind);
      testing::ObserveOrFail(*fresh, BatchFor(kind, rng, 5));
      CHECK_FALSE(fresh->LoadState(bad).ok());
      CHECK_FALSE(fresh->has_observations());
    }
    bad = state;
    bad["format_version"] = 2;
    CHECK_FALSE(o->LoadState(bad).ok());
  }
}

TEST_CASE("observers merge only with the same kind and options", "[observers]") {
  auto a = testing::MakeOrFail(ObserverKind::kMinMax);
  auto b = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax);
  CHECK_THAT(a->Merge(*b).message(), Catch::Contains("different kinds"));
  ObserverOptions sym;
  sym.qscheme = QScheme::kPerTensorSymmetric;
  sym.dtype = DType::kS8;
  auto c = testing::MakeOrFail(ObserverKind::kMinMax, sym);
  const Status s = a->Merge(*c);
  CHECK_THAT(s.message(), Catch::Contains("options differ") && Catch::Contains("qscheme") &&
                              Catch::Contains("dtype"));
  // Merging an observer into itself is a merge with a copy.
  testing::ObserveOrFail(*a, {-1.0f, 2.0f});
  REQUIRE(a->Merge(*a).ok());
  CHECK(a->num_batches() == 2);
  CHECK(a->max_val() == std::vector<float>{2.0f});
}

}  // namespace
}  // namespace octet
