// QLayerNorm and QSoftmax against their references (reference::QLayerNormRow, reference::QSoftmaxRow) bit for bit on
// every ISA this machine runs and at 1-3 threads, and within 1 LSB of the float operator on the dequantized input;
// QLookup's Gelu (erf and tanh) within 1 LSB of the float formula.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "ops/reference/qlayernorm_reference.h"
#include "ops/reference/qlookup_reference.h"
#include "ops/reference/qsoftmax_reference.h"
#include "tests/ops/int8/qmisc_op_tester.h"

namespace octet {
namespace {

using testing::CodeAt;
using testing::QConst;
using testing::QIn;

int32_t ClampCode(double v, const QParams& q) {
  return static_cast<int32_t>(std::clamp<double>(std::nearbyint(v), q.quant_min(), q.quant_max()));
}

// Every runnable ISA tier at 1 to 3 threads.
std::vector<Context> AllContexts() {
  std::vector<Context> contexts;
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, "qrow ops")) continue;
    for (int threads : {1, 2, 3}) contexts.push_back(testing::ContextFor(isa, threads));
  }
  return contexts;
}

// u8 / s8 rows around a row-dependent centre, with a constant row (zero variance) first.
Tensor RandomRows(std::mt19937_64& rng, DType dtype, int64_t rows, int64_t width) {
  Tensor t = Tensor::Create(dtype, Shape{rows, width}).value();
  const int32_t lo = dtype == DType::kU8 ? 0 : -128;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t centre = lo + std::uniform_int_distribution<int32_t>(30, 225)(rng);
    const int32_t spread = r == 0 ? 0 : std::uniform_int_distribution<int32_t>(1, 90)(rng);
    std::uniform_int_distribution<int32_t> u(-spread, spread);
    for (int64_t i = 0; i < width; ++i) {
      const int32_t c = std::clamp(centre + u(rng), lo, lo + 255);
      if (dtype == DType::kU8) {
        t.data<uint8_t>()[r * width + i] = static_cast<uint8_t>(c);
      } else {
        t.data<int8_t>()[r * width + i] = static_cast<int8_t>(c);
      }
    }
  }
  return t;
}

TEST_CASE(
    "QLayerNorm equals its reference on every ISA and thread count, and "
    "float within 1 LSB",
    "[int8_misc]") {
  auto rng = testing::MakeRng("qlayernorm_op");
  const std::vector<Context> contexts = AllContexts();
  const std::vector<std::pair<DType, DType>> dtypes = {
      {DType::kU8, DType::kU8}, {DType::kS8, DType::kS8}, {DType::kU8, DType::kS8}, {DType::kS8, DType::kU8}};
  int iteration = 0;
  // Widths with and without tails after the 16- and 8-element blocks of the SIMD kernels.
  for (int64_t width : {1, 7, 23, 64, 200, 256, 768}) {
    for (const auto& [x_dtype, y_dtype] : dtypes) {
      const int64_t rows = 9;
      const QParams qx = testing::RandomActivationQParams(rng, x_dtype);
      const Tensor x = RandomRows(rng, x_dtype, rows, width);
      Tensor gamma = testing::RandomTensor(rng, Shape{width}, 0.5f, 1.5f);
      Tensor beta = testing::RandomTensor(rng, Shape{width}, -0.5f, 0.5f);
      const float epsilon = iteration++ % 2 ? 1e-5f : 1e-12f;
      // y over about +-(3 |gamma| + |beta|): the normalised values of a row stay within sqrt(width).
      const float y_scale = 8.0f / 255.0f;
      const QParams qy = QParams::PerTensor(y_dtype, y_scale, y_dtype == DType::kU8 ? 128 : 0).value();
      const bool with_beta = width != 7;
      std::vector<testing::QInput> inputs = {QIn(x, qx), QConst(gamma, std::nullopt)};
      if (with_beta) inputs.push_back(QConst(beta, std::nullopt));
      const AttributeMap attrs{{"epsilon", epsilon}, {"axis", int64_t{-1}}};
      INFO("width " << width << " " << DTypeName(x_dtype) << " -> " << DTypeName(y_dtype) << " X " << qx.ToString());
      // The reference.
      const std::vector<float> g(gamma.data<float>(), gamma.data<float>() + width);
      const std::vector<float> b =
          with_beta ? std::vector<float>(beta.data<float>(), beta.data<float>() + width) : std::vector<float>{};
      const reference::QLayerNormParams p =
          reference::MakeQLayerNormParams(width, qx.scale(), qx.zero_point(), epsilon, g, b, qy.scale(),
                                          qy.zero_point(), qy.quant_min(), qy.quant_max())
              .value();
      Tensor want = Tensor::Create(y_dtype, x.shape()).value();
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t o = r * width;
        if (x_dtype == DType::kU8 && y_dtype == DType::kU8) {
          reference::QLayerNormRow(p, x.data<uint8_t>() + o, want.data<uint8_t>() + o);
        } else if (x_dtype == DType::kU8) {
          reference::QLayerNormRow(p, x.data<uint8_t>() + o, want.data<int8_t>() + o);
        } else if (y_dtype == DType::kU8) {
          reference::QLayerNormRow(p, x.data<int8_t>() + o, want.data<uint8_t>() + o);
        } else {
          reference::QLayerNormRow(p, x.data<int8_t>() + o, want.data<int8_t>() + o);
        }
      }
      for (const Context& context : contexts) {
        const Tensor y = testing::RunQOp("QLayerNorm", inputs, qy, attrs, context).value();
        testing::RequireSameCodes(y, want);
      }
      // Float LayerNormalization (double) of the dequantized rows.
      int max_error = 0;
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < width; ++i) mean += testing::Dequantized(x, qx, r * width + i);
        mean /= static_cast<double>(width);
        for (int64_t i = 0; i < width; ++i) {
          const double d = testing::Dequantized(x, qx, r * width + i) - mean;
          var += d * d;
        }
        var /= static_cast<double>(width);
        for (int64_t i = 0; i < width; ++i) {
          const double n = (testing::Dequantized(x, qx, r * width + i) - mean) / std::sqrt(var + epsilon);
          const double yf = n * g[static_cast<size_t>(i)] + (with_beta ? b[static_cast<size_t>(i)] : 0.0);
          const int32_t f = ClampCode(yf / qy.scale() + qy.zero_point(), qy);
          max_error = std::max(max_error, std::abs(CodeAt(want, r * width + i) - f));
        }
      }
      CHECK(max_error <= 1);
      if (width >= 64) CHECK(testing::VariedCodes(want));
    }
  }
}

TEST_CASE("QLayerNorm u8 -> u8 equals its reference at the extremes: width 16384, full-range codes, any zero point",
          "[int8_misc]") {
  auto rng = testing::MakeRng("qlayernorm extremes");
  const std::vector<Context> contexts = AllContexts();
  const int64_t width = reference::kQLayerNormMaxWidth, rows = 3;
  for (int32_t x_zp : {0, 255, 97}) {
    INFO("x zero point " << x_zp);
    // Row 0: codes 0 and 255 alternating (the largest |D x' - S| and variance); row 1: one 255 among zeros (a huge
    // normalised value); row 2: uniform codes.
    Tensor x = Tensor::Create(DType::kU8, Shape{rows, width}).value();
    std::uniform_int_distribution<int> u(0, 255);
    for (int64_t i = 0; i < width; ++i) {
      x.data<uint8_t>()[i] = i % 2 ? 255 : 0;
      x.data<uint8_t>()[width + i] = i == 777 ? 255 : 0;
      x.data<uint8_t>()[2 * width + i] = static_cast<uint8_t>(u(rng));
    }
    const QParams qx = QParams::PerTensor(DType::kU8, 0.05f, x_zp).value();
    const QParams qy = QParams::PerTensor(DType::kU8, 0.02f, 128).value();
    const Tensor gamma = testing::RandomTensor(rng, Shape{width}, -2.0f, 2.0f);
    const Tensor beta = testing::RandomTensor(rng, Shape{width}, -0.5f, 0.5f);
    const std::vector<float> g(gamma.data<float>(), gamma.data<float>() + width);
    const std::vector<float> b(beta.data<float>(), beta.data<float>() + width);
    const reference::QLayerNormParams p =
        reference::MakeQLayerNormParams(width, qx.scale(), qx.zero_point(), 1e-5f, g, b, qy.scale(), qy.zero_point(),
                                        qy.quant_min(), qy.quant_max())
            .value();
    Tensor want = Tensor::Create(DType::kU8, x.shape()).value();
    for (int64_t r = 0; r < rows; ++r) {
      reference::QLayerNormRow(p, x.data<uint8_t>() + r * width, want.data<uint8_t>() + r * width);
    }
    CHECK(testing::VariedCodes(want));
    const AttributeMap attrs{{"epsilon", 1e-5f}, {"axis", int64_t{-1}}};
    for (const Context& context : contexts) {
      const Tensor y =
          testing::RunQOp("QLayerNorm", {QIn(x, qx), QConst(gamma, std::nullopt), QConst(beta, std::nullopt)}, qy,
                          attrs, context)
              .value();
      testing::RequireSameCodes(y, want);
    }
  }
}
TEST_CASE(
    "QSoftmax equals its reference on every ISA and thread count, and "
    "float within 1 LSB",
    "[int8_misc]") {
  auto rng = testing::MakeRng("qsoftmax_op");
  const std::vector<Context> contexts = AllContexts();
  for (int64_t width : {1, 5, 128, 1000}) {
    for (DType x_dtype : {DType::kU8, DType::kS8}) {
      for (DType y_dtype : {DType::kU8, DType::kS8}) {
        const int64_t rows = 6;
        const QParams qx = testing::RandomActivationQParams(rng, x_dtype);
        const QParams qy = QParams::PerTensor(y_dtype, 1.0f / 256.0f, y_dtype == DType::kU8 ? 0 : -128).value();
        const Tensor x = RandomRows(rng, x_dtype, rows, width);
        INFO("width " << width << " " << DTypeName(x_dtype) << " -> " << DTypeName(y_dtype) << " X " << qx.ToString());
        const reference::QSoftmaxParams p =
            reference::MakeQSoftmaxParams(qx.scale(), qy.scale(), qy.zero_point(), qy.quant_min(), qy.quant_max())
                .value();
        Tensor want = Tensor::Create(y_dtype, x.shape()).value();
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t o = r * width;
          if (x_dtype == DType::kU8 && y_dtype == DType::kU8) {
            reference::QSoftmaxRow(p, width, x.data<uint8_t>() + o, want.data<uint8_t>() + o);
          } else if (x_dtype == DType::kU8) {
            reference::QSoftmaxRow(p, width, x.data<uint8_t>() + o, want.data<int8_t>() + o);
          } else if (y_dtype == DType::kU8) {
            reference::QSoftmaxRow(p, width, x.data<int8_t>() + o, want.data<uint8_t>() + o);
          } else {
            reference::QSoftmaxRow(p, width, x.data<int8_t>() + o, want.data<int8_t>() + o);
          }
        }
        for (const Context& context : contexts) {
          const Tensor y = testing::RunQOp("QSoftmax", {QIn(x, qx)}, qy, {}, context).value();
          testing::RequireSameCodes(y, want);
        }
        int max_error = 0;
        for (int64_t r = 0; r < rows; ++r) {
          double max = -1e30, sum = 0;
          for (int64_t i = 0; i < width; ++i) max = std::max<double>(max, testing::Dequantized(x, qx, r * width + i));
          for (int64_t i = 0; i < width; ++i) sum += std::exp(testing::Dequantized(x, qx, r * width + i) - max);
          for (int64_t i = 0; i < width; ++i) {
            const double pf = std::exp(testing::Dequantized(x, qx, r * width + i) - max) / sum;
            const int32_t f = ClampCode(pf / qy.scale() + qy.zero_point(), qy);
            max_error = std::max(max_error, std::abs(CodeAt(want, r * width + i) - f));
          }
        }
        CHECK(max_error <= 1);
      }
    }
  }
}

TEST_CASE(
    "QLayerNorm and QSoftmax refuse another axis and missing or computed "
    "parameters",
    "[int8_misc]") {
  auto rng = testing::MakeRng("qrow_errors");
  const QParams q = QParams::PerTensor(DType::kU8, 0.05f, 128).value();
  const Tensor x = RandomRows(rng, DType::kU8, 3, 4);
  const Tensor gamma = testing::RandomTensor(rng, Shape{4});
  const Context context = Context::ForIsas(DetectedIsas(), 1);
  auto softmax = testing::RunQOp("QSoftmax", {QIn(x, q)}, q, {{"axis", int64_t{0}}}, context);
  REQUIRE(!softmax.ok());
  CHECK_THAT(softmax.status().message(), Catch::Contains("axis 0") && Catch::Contains("--skip"));
  auto ln = testing::RunQOp("QLayerNorm", {QIn(x, q), QIn(gamma, std::nullopt)}, q, {}, context);
  REQUIRE(!ln.ok());
  CHECK_THAT(ln.status().message(), Catch::Contains("Scale") && Catch::Contains("constant f32 with 4"));
  const Tensor short_gamma = testing::RandomTensor(rng, Shape{3});
  auto ln_short = testing::RunQOp("QLayerNorm", {QIn(x, q), QConst(short_gamma, std::nullopt)}, q, {}, context);
  REQUIRE(!ln_short.ok());
}

TEST_CASE("QSoftmax equals its reference at exact rounding ties, over output scales, and past 2^17 elements",
          "[int8_misc]") {
  auto rng = testing::MakeRng("qsoftmax ties");
  const std::vector<Context> contexts = AllContexts();
  auto check = [&](const Tensor& x, const QParams& qx, const QParams& qy) {
    const int64_t width = x.shape().dim(1), rows = x.shape().dim(0);
    const reference::QSoftmaxParams p =
        reference::MakeQSoftmaxParams(qx.scale(), qy.scale(), qy.zero_point(), qy.quant_min(), qy.quant_max()).value();
    Tensor want = Tensor::Create(DType::kU8, x.shape()).value();
    for (int64_t r = 0; r < rows; ++r) {
      reference::QSoftmaxRow(p, width, x.data<uint8_t>() + r * width, want.data<uint8_t>() + r * width);
    }
    for (const Context& context : contexts) {
      testing::RequireSameCodes(testing::RunQOp("QSoftmax", {QIn(x, qx)}, qy, {}, context).value(), want);
    }
    return want;
  };
  const QParams qx = QParams::PerTensor(DType::kU8, 0.1f, 0).value();
  // Rows of n equal codes with y_scale 1/k: y = floor(k / n + 1/2), exact ties of the division. For these (n, k) a
  // double quotient alone rounds to one less than the tie (so the operator's correction is what keeps them equal).
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int>>{{98, 49}, {98, 147}, {196, 98}, {2, 3}, {6, 3}}) {
    INFO("row of " << n << " equal codes, y_scale 1/" << k);
    Tensor x = Tensor::Create(DType::kU8, Shape{2, n}).value();
    for (int64_t i = 0; i < 2 * n; ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i < n ? 7 : 200);
    const Tensor y = check(x, qx, QParams::PerTensor(DType::kU8, 1.0f / static_cast<float>(k), 0).value());
    CHECK(y.data<uint8_t>()[0] == static_cast<uint8_t>(std::floor(k / static_cast<double>(n) + 0.5)));
  }
  // Random rows and output scales from 1/255 to 1/16.
  for (int trial = 0; trial < 8; ++trial) {
    const float y_scale = 1.0f / std::uniform_real_distribution<float>(16.0f, 255.0f)(rng);
    INFO("y_scale " << y_scale);
    check(RandomRows(rng, DType::kU8, 5, 77), testing::RandomActivationQParams(rng, DType::kU8),
          QParams::PerTensor(DType::kU8, y_scale, 0).value());
  }
  // A row of 2^17 + 3 elements (a sum of 2^40 or more: the operator's exact fallback).
  Tensor wide = Tensor::Create(DType::kU8, Shape{1, (int64_t{1} << 17) + 3}).value();
  for (uint8_t& v : wide.values<uint8_t>()) v = 10;
  wide.data<uint8_t>()[5] = 9;
  check(wide, qx, QParams::PerTensor(DType::kU8, 1.0f / 65536.0f, 0).value());
}

TEST_CASE("QLookup's Gelu (erf and tanh) is within 1 LSB of the float formula", "[int8_misc]") {
  for (const std::string approximate : {"none", "tanh"}) {
    const QParams qx = QParams::PerTensor(DType::kU8, 12.0f / 255.0f, 140).value();
    const QParams qy = QParams::PerTensor(DType::kU8, 6.0f / 255.0f, 10).value();
    Tensor x = Tensor::Create(DType::kU8, Shape{256}).value();
    for (int i = 0; i < 256; ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i);
    const AttributeMap attrs{{"function", "Gelu"}, {"approximate", approximate}};
    const Tensor y = testing::RunQOp("QLookup", {QIn(x, qx)}, qy, attrs, Context::ForIsas(DetectedIsas(), 2)).value();
    for (int i = 0; i < 256; ++i) {
      const double v = testing::Dequantized(x, qx, i);
      const double g = approximate == "tanh"
                           ? 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                           : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      CHECK(std::abs(CodeAt(y, i) - ClampCode(g / qy.scale() + qy.zero_point(), qy)) <= 1);
    }
    CHECK(testing::VariedCodes(y));
  }
  auto bad = testing::RunQOp(
      "QLookup", {QIn(Tensor::Create(DType::kU8, Shape{2}).value(), QParams::PerTensor(DType::kU8, 0.1f, 0).value())},
      QParams::PerTensor(DType::kU8, 0.1f, 0).value(), {{"function", "Gelu"}, {"approximate", "cubic"}},
      Context::ForIsas(DetectedIsas(), 1));
  REQUIRE(!bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("cubic"));
}

}  // namespace
}  // namespace octet
