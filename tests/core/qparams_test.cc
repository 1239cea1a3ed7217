// QParams validation and QTensor construction.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/qparams.h"

namespace octet {
namespace {

TEST_CASE("QParams accepts valid per-tensor and per-channel parameters", "[core]") {
  auto u8 = QParams::PerTensor(DType::kU8, 0.1f, 128);
  REQUIRE(u8.ok());
  CHECK(u8->quant_min() == 0);
  CHECK(u8->quant_max() == 255);
  CHECK(u8->scale() == 0.1f);
  CHECK(u8->zero_point() == 128);
  auto four_bit = QParams::PerTensor(DType::kU8, 0.5f, 3, 0, 15);
  REQUIRE(four_bit.ok());
  auto pc = QParams::PerChannel(DType::kS8, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, 1, -127, 127);
  REQUIRE(pc.ok());
  CHECK(pc->per_channel());
  CHECK(pc->num_channels() == 3);
  CHECK(pc->ValidateFor(Shape{4, 3, 2}, "w").ok());
  CHECK(QParams::Create(QScheme::kPerTensorSymmetric, DType::kU8, 0, 255, {0.1f}, {128}).ok());
  CHECK(QParams::Create(QScheme::kPerTensorSymmetric, DType::kU8, 0, 15, {0.1f}, {7}).ok());
  CHECK(QParams::Create(QScheme::kPerChannelSymmetric, DType::kS8, -128, 127, {0.1f, 1.0f}, {0, 0}, 0).ok());
}

TEST_CASE("QParams rejects invalid parameters with a clear message", "[core]") {
  auto expect_error = [](Result<QParams> r, const char* fragment) {
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains(fragment));
  };
  expect_error(QParams::PerTensor(DType::kU8, 0.0f, 0), "scale must be finite and > 0");
  expect_error(QParams::PerTensor(DType::kU8, -1.0f, 0), "scale must be finite and > 0");
  expect_error(QParams::PerTensor(DType::kU8, std::numeric_limits<float>::infinity(), 0), "finite");
  expect_error(QParams::PerTensor(DType::kU8, NAN, 0), "finite");
  expect_error(QParams::PerTensor(DType::kU8, 1e-45f, 0), "1/scale overflows");
  expect_error(QParams::PerTensor(DType::kU8, 0.1f, 256), "zero point must lie in [quant_min, quant_max]");
  expect_error(QParams::PerTensor(DType::kS8, 0.1f, 5, 10, 20), "zero point must lie");
  expect_error(QParams::PerTensor(DType::kS8, 0.1f, 0, -200, 127), "quant_min < quant_max");
  expect_error(QParams::PerTensor(DType::kS8, 0.1f, 0, 5, 5), "quant_min < quant_max");
  expect_error(QParams::PerTensor(DType::kF32, 0.1f, 0), "dtype must be u8, s8 or s32");
  expect_error(QParams::PerChannel(DType::kS8, {0.1f, 0.2f}, {0}, 0, -128, 127), "as many zero points as scales");
  expect_error(QParams::PerChannel(DType::kS8, {}, {}, 0, -128, 127), "as many zero points as scales");
  expect_error(QParams::PerChannel(DType::kS8, {0.1f}, {0}, -1, -128, 127), "axis must be >= 0");
  expect_error(QParams::Create(QScheme::kPerTensorAffine, DType::kS8, -128, 127, {0.1f, 0.2f}, {0, 0}),
               "per-tensor scheme takes one scale");
  expect_error(QParams::Create(QScheme::kPerTensorSymmetric, DType::kS8, -128, 127, {0.1f}, {3}), "symmetric");
  auto pc = QParams::PerChannel(DType::kS8, {0.1f, 0.2f}, {0, 1}, 2, -128, 127).value();
  auto bad_axis = pc.ValidateFor(Shape{2, 2}, "weight");
  REQUIRE_FALSE(bad_axis.ok());
  CHECK_THAT(bad_axis.message(), Catch::Contains("'weight'") && Catch::Contains("axis 2 is not below rank 2"));
  auto bad_len = pc.ValidateFor(Shape{2, 2, 5}, "weight");
  REQUIRE_FALSE(bad_len.ok());
  CHECK_THAT(bad_len.message(), Catch::Contains("2 channels given, dimension 2 has 5"));
}

TEST_CASE("QTensor checks dtype and shape against its qparams", "[core]") {
  Tensor t = Tensor::Create(DType::kU8, Shape{2, 3}).value();
  CHECK(QTensor::Create(t, QParams::PerTensor(DType::kU8, 1.0f, 0).value()).ok());
  CHECK_FALSE(QTensor::Create(t, QParams::PerTensor(DType::kS8, 1.0f, 0).value()).ok());
  auto pc = QParams::PerChannel(DType::kU8, {1.0f, 2.0f}, {0, 0}, 1, 0, 255).value();
  CHECK_FALSE(QTensor::Create(t, pc).ok());
}

}  // namespace
}  // namespace octet
