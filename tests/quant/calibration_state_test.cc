// Calibration state documents (quant/calibration_state.h): shards calibrated separately and merged in any order
// give the document of one pass, byte for byte, and the same qparams after loading; loading and merging refuse
// other models, partial states, other observer flags, doubled shards and order-dependent observers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "quant/calibrate.h"
#include "quant/calibration_state.h"
#include "quant/prepare.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

QConfigMapping MappingWith(ObserverKind activation) {
  QConfig q = GetDefaultQConfig("x86").value();
  q.activation = ObserverSpec{activation, {}};
  q.activation.options.reduce_range = true;
  QConfigMapping mapping;
  mapping.SetGlobal(q);
  return mapping;
}

// The state of `graph` calibrated on batches [first, end) as shard `shard` of `count` (count 1: all the data).
nlohmann::json ShardState(const Graph& graph, const QConfigMapping& mapping,
                          const std::vector<std::vector<Tensor>>& batches, size_t first, size_t end, int64_t shard,
                          int64_t count) {
  auto prepared = Prepare(graph, mapping);
  REQUIRE(prepared.ok());
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  const std::span<const std::vector<Tensor>> all(batches);
  REQUIRE(Calibrate(*prepared, context, all.subspan(first, end - first)).ok());
  CalibrationStateInfo info;
  info.model_fingerprint = "fnv1a64:test";
  info.num_samples = static_cast<int64_t>(end - first);
  info.shard_count = count;
  if (count > 1) info.covered = {shard};
  return SaveCalibrationState(*prepared, info);
}

std::vector<std::vector<Tensor>> StateBatches(std::mt19937_64& rng) {
  std::vector<std::vector<Tensor>> b;
  for (int i = 0; i < 7; ++i) {
    b.push_back({testing::RandomTensor(rng, Shape{2 + i % 3, 3, 8, 8}, -1.0f - 0.4f * i, 1.0f + 0.7f * (i % 4))});
  }
  return b;
}

TEST_CASE("calibration states of shards merge into the state of one pass, byte for byte", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("calibration_state");
  const Graph graph = testing::SmallCnn(rng());
  const auto batches = StateBatches(rng);
  for (ObserverKind kind : {ObserverKind::kMinMax, ObserverKind::kPercentile, ObserverKind::kEntropy,
                            ObserverKind::kMse, ObserverKind::kPow2Histogram}) {
    INFO(ObserverKindName(kind));
    const QConfigMapping mapping = MappingWith(kind);
    const nlohmann::json one = ShardState(graph, mapping, batches, 0, batches.size(), 0, 1);
    // 3 shards of 2, 2 and 3 batches, merged in every order.
    std::vector<nlohmann::json> shards = {ShardState(graph, mapping, batches, 0, 2, 0, 3),
                                          ShardState(graph, mapping, batches, 2, 4, 1, 3),
                                          ShardState(graph, mapping, batches, 4, 7, 2, 3)};
    std::vector<size_t> order = {0, 1, 2};
    do {
      std::vector<nlohmann::json> states;
      std::vector<std::string> names;
      for (size_t i : order) {
        states.push_back(shards[i]);
        names.push_back("shard " + std::to_string(i));
      }
      auto merged = MergeCalibrationStates(states, names);
      REQUIRE(merged.ok());
      CHECK(SerializeCalibrationState(*merged) == SerializeCalibrationState(one));
    } while (std::next_permutation(order.begin(), order.end()));
    // Two shards give a partial state, which merges with the third.
    const std::vector<std::string> two_names = {"a", "b"};
    auto partial = MergeCalibrationStates(std::vector<nlohmann::json>{shards[2], shards[0]}, two_names);
    REQUIRE(partial.ok());
    CHECK(partial->contains("shards"));
    auto full = MergeCalibrationStates(std::vector<nlohmann::json>{shards[1], *partial}, two_names);
    REQUIRE(full.ok());
    CHECK(SerializeCalibrationState(*full) == SerializeCalibrationState(one));

    // Loaded into a fresh Prepare, the state gives the qparams of the calibrated graph.
    auto direct = Prepare(graph, mapping);
    REQUIRE(direct.ok());
    REQUIRE(Calibrate(*direct, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1), batches).ok());
    auto loaded = Prepare(graph, mapping);
    REQUIRE(loaded.ok());
    const Status s = LoadCalibrationState(*loaded, *full, "fnv1a64:test", "state.json");
    REQUIRE(s.ok());
    auto qa = direct->CalculateQParams();
    auto qb = loaded->CalculateQParams();
    REQUIRE(qa.ok());
    REQUIRE(qb.ok());
    REQUIRE(qa->size() == qb->size());
    for (const auto& [name, q] : *qa) {
      INFO(name);
      CHECK(q.scales() == qb->at(name).scales());
      CHECK(q.zero_points() == qb->at(name).zero_points());
    }
  }
}

TEST_CASE("calibration states refuse other models, partial states, other flags, doubled shards", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("calibration_state_refusals");
  const Graph graph = testing::SmallCnn(rng());
  const auto batches = StateBatches(rng);
  const QConfigMapping mapping = MappingWith(ObserverKind::kPow2Histogram);
  const nlohmann::json one = ShardState(graph, mapping, batches, 0, batches.size(), 0, 1);
  const nlohmann::json s0 = ShardState(graph, mapping, batches, 0, 3, 0, 2);
  auto fresh = Prepare(graph, mapping);
  REQUIRE(fresh.ok());
  auto message = [&](const nlohmann::json& state, std::string_view fingerprint) {
    const Status s = LoadCalibrationState(*fresh, state, fingerprint, "state.json");
    return s.ok() ? std::string() : s.message();
  };
  CHECK_THAT(message(one, "fnv1a64:other"), Catch::Contains("made from another model"));
  CHECK_THAT(message(s0, "fnv1a64:test"), Catch::Contains("merge the states of all 2 shards"));
  auto minmax = Prepare(graph, MappingWith(ObserverKind::kMinMax));
  REQUIRE(minmax.ok());
  const Status other_flags = LoadCalibrationState(*minmax, one, "fnv1a64:test", "state.json");
  CHECK_THAT(other_flags.message(), Catch::Contains("give the same quantization flags"));
  nlohmann::json future = one;
  future["format_version"] = 2;
  CHECK_THAT(message(future, "fnv1a64:test"), Catch::Contains("format_version must be 1"));

  const std::vector<std::string> names = {"a.json", "b.json"};
  auto twice = MergeCalibrationStates(std::vector<nlohmann::json>{s0, s0}, names);
  REQUIRE(!twice.ok());
  CHECK_THAT(twice.status().message(), Catch::Contains("shard 0/2 is also in another state"));
  auto whole = MergeCalibrationStates(std::vector<nlohmann::json>{one, s0}, names);
  REQUIRE(!whole.ok());
  CHECK_THAT(whole.status().message(), Catch::Contains("already covers all the data"));

  // Order-dependent observers: refused in shards, with the reason.
  for (ObserverKind kind : {ObserverKind::kHistogram, ObserverKind::kMovingAverageMinMax}) {
    INFO(ObserverKindName(kind));
    auto prepared = Prepare(graph, MappingWith(kind));
    REQUIRE(prepared.ok());
    const Status s = CheckShardable(*prepared);
    REQUIRE(!s.ok());
    CHECK_THAT(s.message(), Catch::Contains(kind == ObserverKind::kHistogram ? "rebins" : "moving average"));
    const nlohmann::json a = ShardState(graph, MappingWith(kind), batches, 0, 3, 0, 2);
    const nlohmann::json b = ShardState(graph, MappingWith(kind), batches, 3, 7, 1, 2);
    auto merged = MergeCalibrationStates(std::vector<nlohmann::json>{a, b}, names);
    REQUIRE(!merged.ok());
    CHECK_THAT(merged.status().message(), Catch::Contains("cannot merge the states of value"));
  }
}

}  // namespace
}  // namespace octet
