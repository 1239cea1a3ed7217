// Observer names, option defaults, validation messages and the options' JSON form.
#include <catch2/catch.hpp>

#include "observers/observer_options.h"
#include "tests/observers/observer_test_util.h"

namespace octet {
namespace {

std::string CreateError(ObserverKind kind, const ObserverOptions& o) {
  auto r = ResolveObserverOptions(kind, o);
  if (r.ok()) return "";
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST_CASE("observer names parse both ways", "[observers]") {
  for (ObserverKind k : kAllObserverKinds) {
    auto a = ParseObserverKind(ObserverKindName(k));
    auto b = ParseObserverKind(ObserverClassName(k));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(*a == k);
    CHECK(*b == k);
  }
  CHECK_FALSE(ParseObserverKind("minmaxx").ok());
  CHECK(*ParseHistogramVariant("legacy_1_13") == HistogramVariant::kLegacy113);
  CHECK_FALSE(ParseHistogramVariant("1.13").ok());
}

TEST_CASE("observer defaults follow PyTorch", "[observers]") {
  auto mm = ResolveObserverOptions(ObserverKind::kMinMax, {});
  REQUIRE(mm.ok());
  CHECK(mm->dtype == DType::kU8);
  CHECK(mm->qscheme == QScheme::kPerTensorAffine);
  CHECK(mm->range.quant_min == 0);
  CHECK(mm->range.quant_max == 255);
  CHECK(mm->eps == std::numeric_limits<float>::epsilon());
  auto pc = ResolveObserverOptions(ObserverKind::kPerChannelMinMax, {});
  REQUIRE(pc.ok());
  CHECK(pc->qscheme == QScheme::kPerChannelAffine);
  CHECK(pc->ch_axis == 0);
  auto ma = ResolveObserverOptions(ObserverKind::kMovingAverageMinMax, {});
  REQUIRE(ma.ok());
  CHECK(ma->averaging_constant == 0.01f);
  auto h = ResolveObserverOptions(ObserverKind::kHistogram, {});
  REQUIRE(h.ok());
  CHECK(h->bins == 2048);
  CHECK(h->histogram_variant == HistogramVariant::kUpstream);
  CHECK(h->upsample_rate == 16);
  ObserverOptions legacy;
  legacy.histogram_variant = HistogramVariant::kLegacy113;
  auto hl = ResolveObserverOptions(ObserverKind::kHistogram, legacy);
  REQUIRE(hl.ok());
  CHECK(hl->upsample_rate == 128);
  auto p = ResolveObserverOptions(ObserverKind::kPercentile, {});
  REQUIRE(p.ok());
  CHECK(p->percentile == 99.99);
}

TEST_CASE("observer options PyTorch rejects are rejected with a clear message", "[observers]") {
  ObserverOptions o;
  o.qscheme = QScheme::kPerChannelAffine;
  CHECK_THAT(CreateError(ObserverKind::kMinMax, o), Catch::Contains("per_tensor_affine or per_tensor_symmetric"));
  CHECK_THAT(CreateError(ObserverKind::kHistogram, o), Catch::Contains("HistogramObserver"));
  o.qscheme = QScheme::kPerTensorSymmetric;
  CHECK_THAT(CreateError(ObserverKind::kPerChannelMinMax, o), Catch::Contains("per_channel_affine or"));
  o.reduce_range = true;  // symmetric + quint8 + reduce_range
  for (ObserverKind k : {ObserverKind::kMinMax, ObserverKind::kMovingAverageMinMax, ObserverKind::kHistogram,
                         ObserverKind::kEntropy}) {
    CHECK_THAT(CreateError(k, o), Catch::Contains("cannot reduce range for symmetric"));
  }
  o = {};
  o.quant_min = 1;
  o.quant_max = 10;
  CHECK_THAT(CreateError(ObserverKind::kMinMax, o), Catch::Contains("must include 0"));
  o = {};
  o.quant_max = 10;
  CHECK_THAT(CreateError(ObserverKind::kMinMax, o), Catch::Contains("given together"));
}

TEST_CASE("observer options that do not apply, or are out of range, are rejected", "[observers]") {
  ObserverOptions o;
  o.averaging_constant = 0.5;
  CHECK_THAT(CreateError(ObserverKind::kMinMax, o), Catch::Contains("'averaging_constant' does not apply"));
  CHECK(CreateError(ObserverKind::kMovingAverageMinMax, o).empty());
  o = {};
  o.ch_axis = 1;
  CHECK_THAT(CreateError(ObserverKind::kHistogram, o), Catch::Contains("'ch_axis' does not apply"));
  o = {};
  o.bins = 512;
  CHECK_THAT(CreateError(ObserverKind::kPerChannelMinMax, o), Catch::Contains("'bins' does not apply"));
  o = {};
  o.upsample_rate = 4;
  CHECK_THAT(CreateError(ObserverKind::kPercentile, o), Catch::Contains("'upsample_rate' does not apply"));
  o = {};
  o.percentile = 99.0;
  CHECK_THAT(CreateError(ObserverKind::kEntropy, o), Catch::Contains("'percentile' does not apply"));

  struct Bad {
    ObserverKind kind;
    ObserverOptions options;
    const char* message;
  };
  std::vector<Bad> bad;
  auto add = [&](ObserverKind k, auto set, const char* m) {
    ObserverOptions x;
    set(x);
    bad.push_back({k, x, m});
  };
  add(ObserverKind::kMovingAverageMinMax, [](auto& x) { x.averaging_constant = 0.0; }, "(0, 1]");
  add(ObserverKind::kMovingAverageMinMax, [](auto& x) { x.averaging_constant = 1.5; }, "(0, 1]");
  add(ObserverKind::kMinMax, [](auto& x) { x.eps = 0.0; }, "eps must be");
  add(ObserverKind::kMinMax, [](auto& x) { x.eps = 1e-45; }, "eps must be");
  add(ObserverKind::kMinMax, [](auto& x) { x.dtype = DType::kF32; }, "quint8, qint8 or qint32");
  add(ObserverKind::kHistogram, [](auto& x) { x.bins = 0; }, "bins must be");
  add(ObserverKind::kHistogram, [](auto& x) { x.upsample_rate = 0; }, "upsample_rate must be");
  add(ObserverKind::kPercentile, [](auto& x) { x.percentile = 20.0; }, "[50, 100]");
  add(ObserverKind::kMse, [](auto& x) { x.bins = 8; }, "bins must be");
  add(ObserverKind::kEntropy, [](auto& x) { x.dtype = DType::kS32; }, "quantization levels");
  add(ObserverKind::kPerChannelMinMax, [](auto& x) { x.ch_axis = 99; }, "ch_axis");
  for (const Bad& b : bad) {
    INFO(ObserverKindName(b.kind) << ": " << b.message);
    CHECK_THAT(CreateError(b.kind, b.options), Catch::Contains(b.message));
  }
}

TEST_CASE("observer options round-trip through JSON", "[observers]") {
  ObserverOptions o;
  o.dtype = DType::kS8;
  o.qscheme = QScheme::kPerTensorSymmetric;
  o.quant_min = -127;
  o.quant_max = 127;
  o.eps = 1.0 / 4096;
  o.bins = 1024;
  o.histogram_variant = HistogramVariant::kLegacy113;
  o.upsample_rate = 64;
  o.skip_non_finite = true;
  auto r = ResolveObserverOptions(ObserverKind::kHistogram, o);
  REQUIRE(r.ok());
  const nlohmann::json j = OptionsToJson(*r);
  CHECK(j["dtype"] == "qint8");
  CHECK(j["quant_min"] == -127);
  CHECK_FALSE(j.contains("averaging_constant"));
  auto back = OptionsFromJson(j);
  REQUIRE(back.ok());
  auto r2 = ResolveObserverOptions(ObserverKind::kHistogram, *back);
  REQUIRE(r2.ok());
  CHECK(*r2 == *r);

  ObserverOptions ma;
  ma.averaging_constant = 0.01;  // not a float32 value: stored as float32, and round-trips as that
  auto rma = ResolveObserverOptions(ObserverKind::kMovingAverageMinMax, ma);
  REQUIRE(rma.ok());
  auto back_ma = OptionsFromJson(OptionsToJson(*rma));
  REQUIRE(back_ma.ok());
  CHECK(*ResolveObserverOptions(ObserverKind::kMovingAverageMinMax, *back_ma) == *rma);

  CHECK_THAT(OptionsFromJson(nlohmann::json{{"bogus", 1}}).status().message(), Catch::Contains("unknown option"));
  CHECK_THAT(OptionsFromJson(nlohmann::json{{"bins", 20.5}}).status().message(), Catch::Contains("an integer"));
  CHECK_THAT(OptionsFromJson(nlohmann::json{{"reduce_range", 1}}).status().message(), Catch::Contains("true or"));
  CHECK_THAT(OptionsFromJson(nlohmann::json{{"dtype", "float64"}}).status().message(), Catch::Contains("dtype"));
  CHECK_FALSE(OptionsFromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace octet
