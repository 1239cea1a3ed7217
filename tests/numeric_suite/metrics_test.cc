// Numeric-suite metrics: SQNR, normalized L2, cosine similarity and max abs error in LSB against hand-computed
// values, their edge cases (identical, zero, opposite tensors) and shape/dtype errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "numeric_suite/metrics.h"

namespace octet {
namespace {

Tensor MetricsF32(Shape shape, std::vector<float> v) { return Tensor::FromValues<float>(std::move(shape), v).value(); }

TEST_CASE("metrics: SQNR, normalized L2, cosine and max LSB error match hand-computed values", "[numeric_suite]") {
  // x = (3, 4): ||x|| = 5. y = (3, 3): x - y = (0, 1), ||x - y|| = 1.
  Tensor x = MetricsF32({2}, {3, 4});
  Tensor y = MetricsF32({2}, {3, 3});
  CHECK(Sqnr(x, y).value() == Approx(20.0 * std::log10(5.0)));
  CHECK(NormalizedL2(x, y).value() == Approx(1.0 / 5.0));
  CHECK(CosineSimilarity(x, y).value() == Approx(21.0 / (5.0 * std::sqrt(18.0))));
  CHECK(MaxAbsErrorLsb(x, y, 0.25).value() == Approx(4.0));
  // Symmetric in shape handling: a 2-D tensor is flattened.
  Tensor x2 = MetricsF32({2, 2}, {1, -2, 2, 0});
  Tensor y2 = MetricsF32({2, 2}, {1, -2, 2, 0.5f});
  CHECK(Sqnr(x2, y2).value() == Approx(20.0 * std::log10(3.0 / 0.5)));
  CHECK(MaxAbsErrorLsb(x2, y2, 0.5).value() == Approx(1.0));
}

TEST_CASE("metrics: identical, zero and opposite tensors", "[numeric_suite]") {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Tensor x = MetricsF32({3}, {1, -2, 0.5f});
  CHECK(Sqnr(x, x).value() == kInf);
  CHECK(NormalizedL2(x, x).value() == 0.0);
  CHECK(CosineSimilarity(x, x).value() == Approx(1.0));
  CHECK(MaxAbsErrorLsb(x, x, 0.1).value() == 0.0);
  Tensor neg = MetricsF32({3}, {-1, 2, -0.5f});
  CHECK(CosineSimilarity(x, neg).value() == Approx(-1.0));
  // ||x - (-x)|| = 2 ||x||: SQNR = 20 log10(1/2).
  CHECK(Sqnr(x, neg).value() == Approx(-20.0 * std::log10(2.0)));
  Tensor zero = MetricsF32({3}, {0, 0, 0});
  CHECK(Sqnr(zero, zero).value() == kInf);
  CHECK(Sqnr(zero, x).value() == -kInf);
  CHECK(NormalizedL2(zero, x).value() == kInf);
  CHECK(CosineSimilarity(zero, zero).value() == 1.0);
  CHECK(CosineSimilarity(zero, x).value() == 0.0);
}

TEST_CASE("metrics: accumulate in double", "[numeric_suite]") {
  // 1e6 elements of 1e4 with an error of 1 each: float accumulation of the squares loses the small sum.
  std::vector<float> a(1000000, 1e4f), b(1000000, 1e4f - 1.0f);
  Tensor x = MetricsF32({1000000}, a), y = MetricsF32({1000000}, b);
  CHECK(Sqnr(x, y).value() == Approx(80.0).margin(1e-9));
  ErrorSums sums;
  REQUIRE(sums.Accumulate(x, y).ok());
  REQUIRE(sums.Accumulate(x, y).ok());
  CHECK(sums.count == 2000000);
  CHECK(sums.Sqnr() == Approx(80.0).margin(1e-9));
}

TEST_CASE("metrics: shape, dtype and scale errors name what is wrong", "[numeric_suite]") {
  Tensor x = MetricsF32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = MetricsF32({3, 2}, {1, 2, 3, 4, 5, 6});
  Result<double> r = Sqnr(x, y);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  CHECK_FALSE(NormalizedL2(x, y).ok());
  CHECK_FALSE(CosineSimilarity(x, y).ok());
  Tensor q = Tensor::Create(DType::kS8, Shape{2, 3}).value();
  Result<double> d = Sqnr(x, q);
  REQUIRE_FALSE(d.ok());
  CHECK_THAT(d.status().message(), Catch::Contains("s8"));
  CHECK_FALSE(MaxAbsErrorLsb(x, x, 0.0).ok());
  CHECK_FALSE(MaxAbsErrorLsb(x, x, std::numeric_limits<double>::infinity()).ok());
}

}  // namespace
}  // namespace octet
