// ONNX's quantized operators with run-time qparams (ops/float/quantize_linear.h, integer_linear.h), beyond the
// backend suite's cases: rounding and saturation, per-axis qparams on other axes, s8 inputs and outputs, per-row and
// per-column zero points with batch broadcasting, grouped integer convolution, and errors naming the input.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/ops/float/float_op_tester.h"

namespace octet::testing {
namespace {

template <typename T>
Tensor LinearQuantTensor(const Shape& shape, const std::vector<T>& values) {
  return Tensor::FromValues<T>(shape, values).value();
}

template <typename T>
Tensor LinearQuantRandom(const Shape& shape, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(shape.NumElements()));
  for (T& x : v) x = static_cast<T>(d(rng));
  return LinearQuantTensor<T>(shape, v);
}

TEST_CASE("QuantizeLinear rounds x / scale half to even and saturates; NaN gives the zero point",
          "[float_ops][linear_quant]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = LinearQuantTensor<float>(Shape{8}, {0.5f, 1.5f, 2.5f, -2.5f, 1000.0f, -1000.0f, nan, 0.75f});
  auto y = RunFloatOp("QuantizeLinear", {In(x), In(LinearQuantTensor<float>(Shape{}, {0.5f})),
                                         In(LinearQuantTensor<int8_t>(Shape{}, {-3}))});
  INFO(y.status().message());
  REQUIRE(y.ok());
  REQUIRE((*y)[0].dtype() == DType::kS8);
  // x / 0.5: 1, 3, 5, -5, 2000, -2000, NaN, 1.5 -> rne 1, 3, 5, -5, sat, sat, zp, 2 (half to even), plus zp -3.
  const std::vector<int8_t> want = {-2, 0, 2, -8, 127, -128, -3, -1};
  const int8_t* got = (*y)[0].data<int8_t>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(int{got[i]} == int{want[i]});
}

TEST_CASE("QuantizeLinear and DequantizeLinear per axis 0 and -1; no zero point means u8 and 0",
          "[float_ops][linear_quant]") {
  const Tensor x = LinearQuantTensor<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  AttributeMap axis0;
  axis0.Set("axis", int64_t{0});
  auto q0 = RunFloatOp("QuantizeLinear", {In(x), In(LinearQuantTensor<float>(Shape{2}, {1.0f, 2.0f}))}, axis0);
  REQUIRE(q0.ok());
  REQUIRE((*q0)[0].dtype() == DType::kU8);
  const std::vector<uint8_t> want0 = {1, 2, 3, 2, 2, 3};  // row 1 / 2: 2, 2.5 -> 2, 3
  for (size_t i = 0; i < want0.size(); ++i) CHECK(int{(*q0)[0].data<uint8_t>()[i]} == int{want0[i]});

  AttributeMap last;
  last.Set("axis", int64_t{-1});
  const Tensor codes = LinearQuantTensor<int8_t>(Shape{2, 3}, {-128, 0, 127, 5, -5, 1});
  auto d = RunFloatOp("DequantizeLinear",
                      {In(codes), In(LinearQuantTensor<float>(Shape{3}, {0.5f, 1.0f, 2.0f})),
                       In(LinearQuantTensor<int8_t>(Shape{3}, {0, 1, -1}))},
                      last);
  REQUIRE(d.ok());
  const std::vector<float> want1 = {-64.0f, -1.0f, 256.0f, 2.5f, -6.0f, 4.0f};
  for (size_t i = 0; i < want1.size(); ++i) CHECK((*d)[0].data<float>()[i] == want1[i]);
}

TEST_CASE("Quantized ONNX ops name the input whose shape or dtype is wrong", "[float_ops][linear_quant]") {
  const Tensor x = LinearQuantTensor<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  auto wrong_count = RunFloatOp("QuantizeLinear", {In(x), In(LinearQuantTensor<float>(Shape{2}, {1, 1}))});
  REQUIRE_FALSE(wrong_count.ok());
  CHECK_THAT(wrong_count.status().message(), Catch::Contains("input 1 (scale) has shape [2]; expected [3]"));
  auto int_scale = RunFloatOp("DequantizeLinear", {In(LinearQuantTensor<uint8_t>(Shape{2}, {1, 2})),
                                                   In(LinearQuantTensor<int32_t>(Shape{}, {1}))});
  REQUIRE_FALSE(int_scale.ok());
  CHECK_THAT(int_scale.status().message(), Catch::Contains("input 1 (scale) must be float32"));
  auto blocked = RunFloatOp("QuantizeLinear", {In(x), In(LinearQuantTensor<float>(Shape{}, {1.0f}))},
                            AttributeMap{{"block_size", int64_t{2}}});
  REQUIRE_FALSE(blocked.ok());
  CHECK_THAT(blocked.status().message(), Catch::Contains("block_size"));
  auto float_matmul = RunFloatOp("MatMulInteger", {In(x), In(x)});
  REQUIRE_FALSE(float_matmul.ok());
  CHECK_THAT(float_matmul.status().message(), Catch::Contains("input 0 (A) must be uint8 or int8"));
}

TEST_CASE("MatMulInteger: s8 x u8 with per-row and per-column zero points and batch broadcasting",
          "[float_ops][linear_quant]") {
  const Tensor a = LinearQuantRandom<int8_t>(Shape{2, 1, 3, 5}, -128, 127, 1);
  const Tensor b = LinearQuantRandom<uint8_t>(Shape{4, 5, 2}, 0, 255, 2);
  const Tensor a_zp = LinearQuantTensor<int8_t>(Shape{3}, {-7, 0, 100});
  const Tensor b_zp = LinearQuantTensor<uint8_t>(Shape{2}, {255, 3});
  auto y = RunFloatOp("MatMulInteger", {In(a), In(b), In(a_zp), In(b_zp)});
  INFO(y.status().message());
  REQUIRE(y.ok());
  const Tensor& got = (*y)[0];
  REQUIRE(got.shape() == Shape{2, 4, 3, 2});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t r = 0; r < 3; ++r) {
        for (int64_t c = 0; c < 2; ++c) {
          int64_t sum = 0;
          for (int64_t k = 0; k < 5; ++k) {
            sum += (int64_t{a.data<int8_t>()[(i * 3 + r) * 5 + k]} - a_zp.data<int8_t>()[r]) *
                   (int64_t{b.data<uint8_t>()[(j * 5 + k) * 2 + c]} - b_zp.data<uint8_t>()[c]);
          }
          CHECK(got.data<int32_t>()[((i * 4 + j) * 3 + r) * 2 + c] == sum);
        }
      }
    }
  }
}

TEST_CASE("ConvInteger: groups, strides, per-channel u8 weight zero points", "[float_ops][linear_quant]") {
  const Tensor x = LinearQuantRandom<uint8_t>(Shape{1, 4, 5, 5}, 0, 255, 3);
  const Tensor w = LinearQuantRandom<uint8_t>(Shape{2, 2, 3, 3}, 0, 255, 4);
  const Tensor x_zp = LinearQuantTensor<uint8_t>(Shape{}, {9});
  const Tensor w_zp = LinearQuantTensor<uint8_t>(Shape{2}, {128, 7});
  AttributeMap at{
      {"group", int64_t{2}}, {"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  auto y = RunFloatOp("ConvInteger", {In(x), In(w), In(x_zp), In(w_zp)}, at);
  INFO(y.status().message());
  REQUIRE(y.ok());
  const Tensor& got = (*y)[0];
  REQUIRE(got.shape() == Shape{1, 2, 3, 3});
  for (int64_t o = 0; o < 2; ++o) {
    for (int64_t oy = 0; oy < 3; ++oy) {
      for (int64_t ox = 0; ox < 3; ++ox) {
        int64_t sum = 0;
        for (int64_t ci = 0; ci < 2; ++ci) {
          for (int64_t ky = 0; ky < 3; ++ky) {
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx, c = o * 2 + ci;
              // Padding reads the input zero point, so it adds 0.
              const int64_t xv = iy < 0 || iy >= 5 || ix < 0 || ix >= 5 ? 9 : x.data<uint8_t>()[(c * 5 + iy) * 5 + ix];
              sum +=
                  (xv - 9) * (int64_t{w.data<uint8_t>()[((o * 2 + ci) * 3 + ky) * 3 + kx]} - w_zp.data<uint8_t>()[o]);
            }
          }
        }
        CHECK(got.data<int32_t>()[(o * 3 + oy) * 3 + ox] == sum);
      }
    }
  }
}

TEST_CASE("QLinearMatMul writes y_zero_point's dtype (s8) from per-column b scales", "[float_ops][linear_quant]") {
  const Tensor a = LinearQuantTensor<uint8_t>(Shape{1, 2}, {10, 250});
  const Tensor b = LinearQuantTensor<int8_t>(Shape{2, 2}, {1, -2, 3, 4});
  auto y = RunFloatOp(
      "QLinearMatMul",
      {In(a), In(LinearQuantTensor<float>(Shape{}, {0.5f})), In(LinearQuantTensor<uint8_t>(Shape{}, {10})), In(b),
       In(LinearQuantTensor<float>(Shape{2}, {1.0f, 0.25f})), In(LinearQuantTensor<int8_t>(Shape{2}, {0, 0})),
       In(LinearQuantTensor<float>(Shape{}, {2.0f})), In(LinearQuantTensor<int8_t>(Shape{}, {-100}))});
  INFO(y.status().message());
  REQUIRE(y.ok());
  REQUIRE((*y)[0].dtype() == DType::kS8);
  // acc = (0, 240) . columns: 720 and 960; * 0.5 * scale_b / 2 -> 180, 60; + zp -100 -> 80, -40.
  CHECK(int{(*y)[0].data<int8_t>()[0]} == 80);
  CHECK(int{(*y)[0].data<int8_t>()[1]} == -40);
}

}  // namespace
}  // namespace octet::testing
