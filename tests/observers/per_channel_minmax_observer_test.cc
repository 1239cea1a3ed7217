// PerChannelMinMaxObserver and MovingAveragePerChannelMinMaxObserver: axes, channel layouts, shape errors and the
// non-finite rules per channel.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "observers/per_channel_minmax_observer.h"
#include "tests/observers/observer_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kNan;

// Per-channel ranges computed the plain way.
void Reference(const std::vector<float>& x, const Shape& shape, int axis, std::vector<float>* mn,
               std::vector<float>* mx) {
  const int64_t c = shape.dim(axis), inner = shape.Product(axis + 1, shape.rank());
  mn->assign(static_cast<size_t>(c), std::numeric_limits<float>::infinity());
  mx->assign(static_cast<size_t>(c), -std::numeric_limits<float>::infinity());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t ch = static_cast<size_t>((static_cast<int64_t>(i) / inner) % c);
    (*mn)[ch] = std::min((*mn)[ch], x[i]);
    (*mx)[ch] = std::max((*mx)[ch], x[i]);
  }
}

TEST_CASE("PerChannelMinMaxObserver reduces along any axis on every ISA and thread count", "[observers]") {
  auto rng = testing::MakeRng("per channel layouts");
  const std::vector<std::pair<Shape, int>> cases = {
      {Shape{16, 8, 3, 3}, 0}, {Shape{4, 6, 5, 5}, 1},   {Shape{2, 5, 5, 6}, 3},  {Shape{2, 5, 5, 6}, -1},
      {Shape{10, 33}, 1},      {Shape{3, 70, 2}, 1},     {Shape{2, 3, 130}, 1},   {Shape{5}, 0},
      {Shape{1, 64, 64}, 1},   {Shape{300, 2, 65}, 0},   {Shape{7, 1}, 1}};
  for (const auto& [shape, ch_axis] : cases) {
    const auto x = testing::AssortedFloats(rng, static_cast<size_t>(shape.NumElements()));
    const int axis = ch_axis < 0 ? ch_axis + shape.rank() : ch_axis;
    std::vector<float> want_min, want_max;
    Reference(x, shape, axis, &want_min, &want_max);
    for (float& v : want_min) v = v == 0.0f ? 0.0f : v;
    for (float& v : want_max) v = v == 0.0f ? 0.0f : v;
    for (Isa isa : testing::ObserverKernelIsas()) {
      for (int threads : {1, 2}) {
        const Context c = testing::ContextFor(isa, threads);
        ObserverOptions o;
        o.ch_axis = ch_axis;
        auto ob = testing::MakeOrFail(ObserverKind::kPerChannelMinMax, o);
        ob->set_context(&c);
        testing::ObserveOrFail(*ob, testing::TensorOf(x, shape));
        INFO(shape.ToString() << " ch_axis " << ch_axis << " " << IsaName(isa) << " threads " << threads);
        CHECK(ob->min_val() == want_min);
        CHECK(ob->max_val() == want_max);
        auto q = ob->CalculateQParams();
        REQUIRE(q.ok());
        CHECK(q->axis() == axis);
        CHECK(q->num_channels() == shape.dim(axis));
      }
    }
  }
}

TEST_CASE("PerChannelMinMaxObserver rejects scalars, bad axes and changing channel counts", "[observers]") {
  ObserverOptions o;
  o.ch_axis = 2;
  auto ob = testing::MakeOrFail(ObserverKind::kPerChannelMinMax, o);
  Status s = ob->Observe(testing::TensorOf({1.0f, 2.0f}, Shape{1, 2}), "w");
  CHECK_THAT(s.message(), Catch::Contains("ch_axis 2 is out of range for rank 2"));
  auto scalar = Tensor::FromValues<float>(Shape{}, std::vector<float>{1.0f});
  REQUIRE(scalar.ok());
  CHECK_THAT(ob->Observe(*scalar, "s").message(), Catch::Contains("rank >= 1"));
  auto pc = testing::MakeOrFail(ObserverKind::kPerChannelMinMax);
  testing::ObserveOrFail(*pc, testing::TensorOf(std::vector<float>(12, 1.0f), Shape{4, 3}));
  s = pc->Observe(testing::TensorOf(std::vector<float>(15, 1.0f), Shape{5, 3}), "conv2.weight");
  CHECK_THAT(s.message(), Catch::Contains("'conv2.weight'") && Catch::Contains("5 channels") &&
                              Catch::Contains("had 4"));
  // A merge between different channel counts fails too.
  auto other = testing::MakeOrFail(ObserverKind::kPerChannelMinMax);
  testing::ObserveOrFail(*other, testing::TensorOf(std::vector<float>(6, 1.0f), Shape{2, 3}));
  CHECK_FALSE(pc->Merge(*other).ok());
}

TEST_CASE("per-channel observers skip non-finite values per channel", "[observers]") {
  ObserverOptions o;
  o.skip_non_finite = true;
  o.ch_axis = 1;
  for (ObserverKind kind : {ObserverKind::kPerChannelMinMax, ObserverKind::kMovingAveragePerChannelMinMax}) {
    INFO(ObserverKindName(kind));
    auto ob = testing::MakeOrFail(kind, o);
    // Channel 1 has no finite value in the first tensor.
    testing::ObserveOrFail(*ob, testing::TensorOf({1.0f, kNan, -2.0f, kNan}, Shape{2, 2}));
    CHECK(ob->num_skipped() == 2);
    auto q = ob->CalculateQParams();
    REQUIRE_FALSE(q.ok());
    CHECK_THAT(q.status().message(), Catch::Contains("channel 1 has not seen a finite value"));
    testing::ObserveOrFail(*ob, testing::TensorOf({0.5f, 4.0f, kNan, 6.0f}, Shape{2, 2}));
    CHECK(ob->CalculateQParams().ok());
    CHECK(ob->max_val()[1] == 6.0f);  // taken directly, also by the moving average
  }
}

TEST_CASE("MovingAveragePerChannelMinMaxObserver averages each channel", "[observers]") {
  ObserverOptions o;
  o.averaging_constant = 0.5;
  auto ob = testing::MakeOrFail(ObserverKind::kMovingAveragePerChannelMinMax, o);
  testing::ObserveOrFail(*ob, testing::TensorOf({-1.0f, 1.0f, 0.0f, 2.0f}, Shape{2, 2}));
  testing::ObserveOrFail(*ob, testing::TensorOf({-3.0f, 5.0f, 0.0f, 4.0f}, Shape{2, 2}));
  CHECK(ob->min_val() == std::vector<float>{-2.0f, 0.0f});
  CHECK(ob->max_val() == std::vector<float>{3.0f, 3.0f});
}

}  // namespace
}  // namespace octet
