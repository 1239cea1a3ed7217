// MinMaxObserver, MovingAverageMinMaxObserver and PlaceholderObserver: observation rules, the non-finite policy,
// thread- and ISA-independence, and the moving average's documented order dependence.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "observers/minmax_observer.h"
#include "observers/moving_average_minmax_observer.h"
#include "observers/placeholder_observer.h"
#include "tests/observers/observer_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kInf;
using testing::kNan;

TEST_CASE("MinMaxObserver tracks the running range and ignores empty tensors", "[observers]") {
  auto o = testing::MakeOrFail(ObserverKind::kMinMax);
  CHECK_FALSE(o->has_observations());
  CHECK(o->min_val() == std::vector<float>{kInf});
  auto q0 = o->CalculateQParams();  // PyTorch's default before any observation
  REQUIRE(q0.ok());
  CHECK(q0->scale() == 1.0f);
  CHECK(q0->zero_point() == 0);

  auto empty = Tensor::Create(DType::kF32, Shape{0, 7});
  REQUIRE(empty.ok());
  REQUIRE(o->Observe(*empty, "empty").ok());
  CHECK_FALSE(o->has_observations());
  CHECK(o->num_batches() == 0);

  testing::ObserveOrFail(*o, {-0.7f, 0.1f, 0.3f, 0.9f});
  testing::ObserveOrFail(*o, {0.5f, 2.0f});
  CHECK(o->min_val() == std::vector<float>{-0.7f});
  CHECK(o->max_val() == std::vector<float>{2.0f});
  CHECK(o->num_batches() == 2);
  auto q = o->CalculateQParams();
  REQUIRE(q.ok());
  CHECK(testing::SameFloat(q->scale(), (2.0f + 0.7f) / 255.0f));

  // A 0-d tensor is one value.
  auto scalar = Tensor::FromValues<float>(Shape{}, std::vector<float>{-5.0f});
  REQUIRE(scalar.ok());
  testing::ObserveOrFail(*o, *scalar);
  CHECK(o->min_val() == std::vector<float>{-5.0f});

  o->Reset();
  CHECK_FALSE(o->has_observations());
  CHECK(o->num_batches() == 0);
}

TEST_CASE("observers reject non-f32 tensors", "[observers]") {
  auto o = testing::MakeOrFail(ObserverKind::kMinMax);
  auto t = Tensor::Create(DType::kU8, Shape{4});
  REQUIRE(t.ok());
  const Status s = o->Observe(*t, "conv1.weight");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("'conv1.weight'") && Catch::Contains("must be f32"));
}

TEST_CASE("non-finite input is an error naming the tensor, or skipped and counted", "[observers]") {
  for (ObserverKind kind : {ObserverKind::kMinMax, ObserverKind::kMovingAverageMinMax, ObserverKind::kPlaceholder,
                            ObserverKind::kPerChannelMinMax, ObserverKind::kHistogram, ObserverKind::kPercentile,
                            ObserverKind::kEntropy, ObserverKind::kMse}) {
    INFO(ObserverKindName(kind));
    std::vector<float> x(300, 1.0f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) - 8.0f;
    x[123] = kNan;
    x[200] = kInf;
    x[250] = -kInf;
    const Tensor t = testing::TensorOf(x, Shape{3, 100});
    auto strict = MakeObserver(kind);
    REQUIRE(strict.ok());
    const Status s = (*strict)->Observe(t, "layer1.0.relu");
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("'layer1.0.relu'") && Catch::Contains("element 123 is NaN") &&
                                Catch::Contains("skip_non_finite"));
    CHECK_FALSE((*strict)->has_observations());  // a failed Observe changes nothing

    ObserverOptions skip;
    skip.skip_non_finite = true;
    auto lenient = MakeObserver(kind, skip);
    REQUIRE(lenient.ok());
    REQUIRE((*lenient)->Observe(t, "layer1.0.relu").ok());
    CHECK((*lenient)->num_skipped() == 3);
    std::vector<float> finite;
    for (float v : x) {
      if (std::isfinite(v)) finite.push_back(v);
    }
    // Same state as an observer that saw only the finite values (per-channel: per row).
    auto reference = MakeObserver(kind, skip);
    REQUIRE(reference.ok());
    if (kind == ObserverKind::kPerChannelMinMax) {
      CHECK((*lenient)->min_val() == std::vector<float>{-8.0f, -8.0f, -8.0f});
      CHECK((*lenient)->max_val() == std::vector<float>{8.0f, 8.0f, 8.0f});
      continue;
    }
    testing::ObserveOrFail(**reference, finite);
    CHECK((*lenient)->min_val() == (*reference)->min_val());
    CHECK((*lenient)->max_val() == (*reference)->max_val());
    if (kind != ObserverKind::kPlaceholder) {
      auto a = (*lenient)->CalculateQParams();
      auto b = (*reference)->CalculateQParams();
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      CHECK(a->scales() == b->scales());
      CHECK(a->zero_points() == b->zero_points());
    }
    // A tensor with no finite value at all changes nothing but the count.
    (*lenient)->Reset();
    REQUIRE((*lenient)->Observe(testing::TensorOf({kNan, kInf}), "x").ok());
    CHECK_FALSE((*lenient)->has_observations());
    CHECK((*lenient)->num_skipped() == 2);
  }
}

TEST_CASE("MinMaxObserver reports -0.0 extremes as +0.0 on every ISA", "[observers]") {
  for (Isa isa : testing::ObserverKernelIsas()) {
    const Context c = testing::ContextFor(isa);
    auto o = testing::MakeOrFail(ObserverKind::kMinMax);
    o->set_context(&c);
    std::vector<float> x(100, -0.0f);
    x[50] = 0.0f;
    testing::ObserveOrFail(*o, x);
    CHECK(std::signbit(o->min_val()[0]) == false);
    CHECK(std::signbit(o->max_val()[0]) == false);
  }
}

TEST_CASE("MinMaxObserver is identical on every ISA and thread count across tiles", "[observers]") {
  auto rng = testing::MakeRng("minmax tiles");
#ifdef __aarch64__
  const size_t n = 3 * static_cast<size_t>(kScanTile) + 17;
#else
  const size_t n = 9 * static_cast<size_t>(kScanTile) + 17;
#endif
  std::vector<float> x = testing::AssortedFloats(rng, n);
  x[n - 1] = 1e30f;     // the maximum in the last, short tile
  x[kScanTile] = -7e29f;  // the minimum at a tile start
  std::vector<float> want_min, want_max;
  for (Isa isa : testing::ObserverKernelIsas()) {
    for (int threads : {1, 2}) {
      const Context c = testing::ContextFor(isa, threads);
      auto o = testing::MakeOrFail(ObserverKind::kMinMax);
      o->set_context(&c);
      testing::ObserveOrFail(*o, x);
      INFO(IsaName(isa) << " threads " << threads);
      CHECK(o->min_val() == std::vector<float>{-7e29f});
      CHECK(o->max_val() == std::vector<float>{1e30f});
      CHECK(c.LastKernel("minmax_f32").find(IsaName(isa)) != std::string::npos);
    }
  }
}

TEST_CASE("MovingAverageMinMaxObserver follows PyTorch's update rule", "[observers]") {
  ObserverOptions o;
  o.averaging_constant = 0.5;
  auto ma = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax, o);
  testing::ObserveOrFail(*ma, {-1.0f, 1.0f});
  testing::ObserveOrFail(*ma, {-3.0f, 5.0f});
  CHECK(ma->min_val() == std::vector<float>{-2.0f});  // numerics.md 2.5
  CHECK(ma->max_val() == std::vector<float>{3.0f});
  // The default constant is float32(0.01), with float32 arithmetic.
  auto d = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax);
  testing::ObserveOrFail(*d, {0.0f, 1.0f});
  testing::ObserveOrFail(*d, {0.0f, 3.0f});
  const float c = 0.01f;
  CHECK(testing::SameFloat(d->max_val()[0], 1.0f + c * (3.0f - 1.0f)));
}

TEST_CASE("moving averages merge as one more batch and are order-dependent", "[observers]") {
  auto rng = testing::MakeRng("moving average merge");
  ObserverOptions o;
  o.averaging_constant = 0.25;
  std::vector<std::vector<float>> batches;
  for (int b = 0; b < 5; ++b) batches.push_back(testing::AssortedFloats(rng, 50 + 30 * b));
  // Merging an observer that saw one batch equals observing that batch.
  auto all = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax, o);
  for (const auto& b : batches) testing::ObserveOrFail(*all, b);
  auto head = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax, o);
  for (size_t b = 0; b + 1 < batches.size(); ++b) testing::ObserveOrFail(*head, batches[b]);
  auto last = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax, o);
  testing::ObserveOrFail(*last, batches.back());
  REQUIRE(head->Merge(*last).ok());
  CHECK(head->min_val() == all->min_val());
  CHECK(head->max_val() == all->max_val());
  CHECK(head->num_batches() == all->num_batches());
  // Merging into an empty observer copies the other.
  auto blank = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax, o);
  REQUIRE(blank->Merge(*all).ok());
  CHECK(blank->min_val() == all->min_val());
  // The average depends on the order: the documented reason moving averages are not merge-order independent.
  auto fwd = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax, o);
  auto rev = testing::MakeOrFail(ObserverKind::kMovingAverageMinMax, o);
  testing::ObserveOrFail(*fwd, {-1.0f, 1.0f});
  testing::ObserveOrFail(*fwd, {-9.0f, 9.0f});
  testing::ObserveOrFail(*rev, {-9.0f, 9.0f});
  testing::ObserveOrFail(*rev, {-1.0f, 1.0f});
  CHECK(fwd->max_val() != rev->max_val());
}

TEST_CASE("PlaceholderObserver records the range but has no static qparams", "[observers]") {
  auto p = testing::MakeOrFail(ObserverKind::kPlaceholder);
  testing::ObserveOrFail(*p, {-2.0f, 3.0f});
  CHECK(p->max_val() == std::vector<float>{3.0f});
  auto q = p->CalculateQParams();
  REQUIRE_FALSE(q.ok());
  CHECK(q.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(q.status().message(), Catch::Contains("dynamic quantization"));
}

}  // namespace
}  // namespace octet
