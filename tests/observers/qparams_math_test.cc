// calculate_qmin_qmax and _calculate_qparams (observers/qparams_math.h) on the values numerics.md §2.2-2.3
// documents, edge cases, and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "observers/qparams_math.h"
#include "tests/observers/observer_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kInf;

QuantRange Range(DType dtype, std::optional<int64_t> lo = {}, std::optional<int64_t> hi = {}, bool rr = false) {
  auto r = CalculateQMinQMax(dtype, lo, hi, rr);
  if (!r.ok()) FAIL(r.status().ToString());
  return *r;
}

QParamsSpec Spec(QScheme scheme, DType dtype, QuantRange range) {
  QParamsSpec s;
  s.qscheme = scheme;
  s.dtype = dtype;
  s.range = range;
  return s;
}

QParams From(float lo, float hi, const QParamsSpec& spec) {
  const float a[1] = {lo}, b[1] = {hi};
  auto q = CalculateQParamsFromRange(a, b, spec);
  if (!q.ok()) FAIL(q.status().ToString());
  return *q;
}

TEST_CASE("calculate_qmin_qmax gives PyTorch's effective ranges", "[observers]") {
  struct Row {
    DType dtype;
    std::optional<int64_t> lo, hi;
    bool rr;
    int64_t want_lo, want_hi;
  };
  const Row rows[] = {
      {DType::kS8, {}, {}, false, -128, 127},
      {DType::kS8, {}, {}, true, -64, 63},
      {DType::kU8, {}, {}, false, 0, 255},
      {DType::kU8, {}, {}, true, 0, 127},
      {DType::kS32, {}, {}, false, -2147483648LL, 2147483647LL},
      {DType::kS32, {}, {}, true, -2147483648LL, 2147483647LL},  // PyTorch ignores reduce_range for qint32
      {DType::kU8, 0, 255, true, 0, 127},                         // how default_fake_quant gets 7 bits
      {DType::kS8, -127, 127, true, -64, 63},                     // Python floor division: -127 // 2 == -64
      {DType::kS8, -8, 7, true, -4, 3},
      {DType::kU8, 0, 15, false, 0, 15},
      {DType::kS32, -1000, 1000, false, -1000, 1000},
  };
  for (const Row& r : rows) {
    const QuantRange q = Range(r.dtype, r.lo, r.hi, r.rr);
    INFO(DTypeName(r.dtype) << " rr " << r.rr);
    CHECK(q.quant_min == r.want_lo);
    CHECK(q.quant_max == r.want_hi);
    CHECK(q.customized == r.lo.has_value());
  }
}

TEST_CASE("calculate_qmin_qmax rejects what PyTorch rejects, and ranges that cannot be valid", "[observers]") {
  struct Row {
    DType dtype;
    std::optional<int64_t> lo, hi;
    bool rr;
    const char* message;
  };
  const Row rows[] = {
      {DType::kS8, 1, 100, false, "must include 0"},
      {DType::kS8, -100, -1, false, "must include 0"},
      {DType::kS8, 0, 0, false, "less than quant_max"},
      {DType::kS8, -200, 100, false, "at most 256"},
      {DType::kS32, -2147483648LL, 2147483647LL, false, "at most 2^31"},
      {DType::kU8, 0, 1000, false, "does not fit quint8"},  // PyTorch accepts it and fails later
      {DType::kS8, 5, {}, false, "given together"},
      {DType::kF32, {}, {}, false, "quint8, qint8 or qint32"},
  };
  for (const Row& r : rows) {
    auto q = CalculateQMinQMax(r.dtype, r.lo, r.hi, r.rr);
    INFO(r.message);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(q.status().message(), Catch::Contains(r.message));
  }
  // reduce_range halves [-1, 1] to [-1, 0], which is fine, but [0, 1] to the single value [0, 0].
  auto ok = CalculateQMinQMax(DType::kS8, -1, 1, true);
  REQUIRE(ok.ok());
  CHECK(ok->quant_min == -1);
  CHECK(ok->quant_max == 0);
  auto single = CalculateQMinQMax(DType::kU8, 0, 1, true);
  REQUIRE_FALSE(single.ok());
  CHECK_THAT(single.status().message(), Catch::Contains("single value"));
}

TEST_CASE("_calculate_qparams reproduces the numerics.md 2.3 table", "[observers]") {
  // x = [-0.7, 0.1, 0.3, 0.9]: min -0.7, max 0.9.
  const float lo = -0.7f, hi = 0.9f;
  const float span = hi - lo;
  struct Row {
    QScheme scheme;
    DType dtype;
    QuantRange range;
    float scale;
    int32_t zp;
  };
  const Row rows[] = {
      {QScheme::kPerTensorAffine, DType::kU8, Range(DType::kU8), span / 255.0f, 112},
      {QScheme::kPerTensorAffine, DType::kU8, Range(DType::kU8, {}, {}, true), span / 127.0f, 56},
      {QScheme::kPerTensorAffine, DType::kS8, Range(DType::kS8), span / 255.0f, -16},
      {QScheme::kPerTensorSymmetric, DType::kS8, Range(DType::kS8), 0.9f / 127.5f, 0},
      {QScheme::kPerTensorSymmetric, DType::kU8, Range(DType::kU8), 0.9f / 127.5f, 128},
      {QScheme::kPerTensorSymmetric, DType::kS8, Range(DType::kS8, -127, 127), 0.9f / 127.0f, 0},
      {QScheme::kPerTensorSymmetric, DType::kU8, Range(DType::kU8, 0, 15), 0.9f / 7.5f, 7},
  };
  for (const Row& r : rows) {
    const QParams q = From(lo, hi, Spec(r.scheme, r.dtype, r.range));
    INFO(QSchemeName(r.scheme) << " " << DTypeName(r.dtype) << " [" << r.range.quant_min << ", "
                               << r.range.quant_max << "]");
    CHECK(testing::SameFloat(q.scale(), r.scale));
    CHECK(q.zero_point() == r.zp);
    CHECK(q.scheme() == r.scheme);
  }
  // The documented rounded values.
  CHECK(From(lo, hi, Spec(QScheme::kPerTensorAffine, DType::kU8, Range(DType::kU8))).scale() ==
        Approx(0.006274509).epsilon(1e-6));
  CHECK(From(lo, hi, Spec(QScheme::kPerTensorSymmetric, DType::kS8, Range(DType::kS8))).scale() ==
        Approx(0.007058823).epsilon(1e-6));
}

TEST_CASE("_calculate_qparams edge cases match PyTorch", "[observers]") {
  const QParamsSpec u8 = Spec(QScheme::kPerTensorAffine, DType::kU8, Range(DType::kU8));
  // Positive-only: the range still includes 0.
  QParams q = From(2.0f, 3.0f, u8);
  CHECK(testing::SameFloat(q.scale(), 3.0f / 255.0f));
  CHECK(q.zero_point() == 0);
  // Negative-only.
  q = From(-3.0f, -2.0f, u8);
  CHECK(testing::SameFloat(q.scale(), 3.0f / 255.0f));
  CHECK(q.zero_point() == 255);
  // Constant: not (1.0, 0) as PyTorch's docstring claims.
  q = From(1.0f, 1.0f, u8);
  CHECK(testing::SameFloat(q.scale(), 1.0f / 255.0f));
  CHECK(q.zero_point() == 0);
  // All zero: eps.
  q = From(0.0f, 0.0f, u8);
  CHECK(testing::SameFloat(q.scale(), std::numeric_limits<float>::epsilon()));
  CHECK(q.zero_point() == 0);
  // A custom eps (the qnnpack-symmetric configs' 2^-12).
  QParamsSpec s = Spec(QScheme::kPerTensorSymmetric, DType::kS8, Range(DType::kS8));
  s.eps = 1.0f / 4096.0f;
  q = From(-0.01f, 0.02f, s);
  CHECK(testing::SameFloat(q.scale(), 1.0f / 4096.0f));
  // min / scale exactly -36.5: half to even gives 36 (half away from zero would give 37).
  q = From(-2.28125f, 13.65625f, u8);
  CHECK(testing::SameFloat(q.scale(), 0.0625f));
  CHECK(q.zero_point() == 36);
  // Half to even the other way: -37.5 -> -38.
  q = From(-2.34375f, 13.59375f, u8);
  CHECK(q.zero_point() == 38);
}

TEST_CASE("_calculate_qparams before any observation and on bad ranges", "[observers]") {
  const float unset_lo[1] = {kInf}, unset_hi[1] = {-kInf};
  auto q = CalculateQParamsFromRange(unset_lo, unset_hi,
                                     Spec(QScheme::kPerTensorAffine, DType::kS8, Range(DType::kS8)));
  REQUIRE(q.ok());
  CHECK(q->scale() == 1.0f);
  CHECK(q->zero_point() == 0);
  // Symmetric quint8 needs its midpoint: 128, or (qmin + qmax) // 2 for a customized range.
  q = CalculateQParamsFromRange(unset_lo, unset_hi,
                                Spec(QScheme::kPerTensorSymmetric, DType::kU8, Range(DType::kU8)));
  REQUIRE(q.ok());
  CHECK(q->zero_point() == 128);
  q = CalculateQParamsFromRange({}, {}, Spec(QScheme::kPerChannelSymmetric, DType::kU8, Range(DType::kU8, 0, 15)));
  REQUIRE(q.ok());
  CHECK(q->zero_point() == 7);
  CHECK(q->num_channels() == 1);

  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto [lo, hi] : {std::pair{1.0f, 0.0f}, std::pair{nan, 1.0f}, std::pair{0.0f, kInf}}) {
    const float a[1] = {lo}, b[1] = {hi};
    auto bad = CalculateQParamsFromRange(a, b, Spec(QScheme::kPerTensorAffine, DType::kU8, Range(DType::kU8)));
    CHECK_FALSE(bad.ok());
  }
  // A range wider than FLT_MAX gives an infinite scale: an error, not invalid qparams.
  const float a[1] = {-3e38f}, b[1] = {3e38f};
  auto wide = CalculateQParamsFromRange(a, b, Spec(QScheme::kPerTensorAffine, DType::kU8, Range(DType::kU8)));
  REQUIRE_FALSE(wide.ok());
  CHECK_THAT(wide.status().message(), Catch::Contains("finite"));
}

TEST_CASE("qint32 zero points are computed without PyTorch's int32 overflow", "[observers]") {
  // Mostly negative data over a range wide enough that the scale is not clamped to eps: min_neg / scale is below
  // -2^31, which PyTorch's .to(torch.int) cannot hold. octet's zero point is the intended one.
  const QParams q = From(-1e6f, 10.0f, Spec(QScheme::kPerTensorAffine, DType::kS32, Range(DType::kS32)));
  const float scale = (10.0f + 1e6f) / 4294967296.0f;
  const float shift = std::nearbyint(-1e6f / scale);
  REQUIRE(shift < -2147483648.0f);  // beyond int32
  CHECK(q.zero_point() == -2147483648LL - static_cast<int64_t>(shift));
  CHECK(q.zero_point() > 2147000000);
  const QParams q2 = From(-1.0f, 1.0f, Spec(QScheme::kPerTensorAffine, DType::kS32, Range(DType::kS32)));
  CHECK(testing::SameFloat(q2.scale(), std::numeric_limits<float>::epsilon()));  // 2 / 2^32 < eps
  CHECK(q2.zero_point() == -2139095040);                                          // PyTorch 1.13's value
}

}  // namespace
}  // namespace octet
