// QLookup (every function, u8 and s8, another output dtype too) against reference::BuildLookupTable and, within 1
// LSB, against the float function; QClamp against integer bounds quantized from its real attributes; the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/reference/qlookup_reference.h"
#include "ops/reference/quantize_reference.h"
#include "tests/ops/int8/qmisc_op_tester.h"

namespace octet {
namespace {

using testing::QInput;

// A tensor holding every code of `dtype` once, then random ones.
Tensor AllCodes(std::mt19937_64& rng, DType dtype, int64_t extra) {
  Tensor t = Tensor::Create(dtype, Shape{256 + extra}).value();
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < 256 + extra; ++i) p[i] = static_cast<uint8_t>(i < 256 ? i : static_cast<int64_t>(rng()));
  return t;
}

TEST_CASE("QLookup equals its table and the float function within 1 LSB", "[int8_misc]") {
  auto rng = testing::MakeRng("qlookup_op");
  struct Fn {
    const char* name;
    float alpha, beta;
    bool set_attrs;
  };
  const std::vector<Fn> functions = {{"HardSwish", 0, 0, false},       {"Sigmoid", 0, 0, false},
                                     {"Tanh", 0, 0, false},            {"HardSigmoid", 0.2f, 0.5f, false},
                                     {"HardSigmoid", 0.3f, 0.4f, true}, {"LeakyRelu", 0.01f, 0, false},
                                     {"LeakyRelu", 0.2f, 0, true}};
  const std::vector<std::pair<DType, DType>> dtypes = {
      {DType::kU8, DType::kU8}, {DType::kS8, DType::kS8}, {DType::kU8, DType::kS8}, {DType::kS8, DType::kU8}};
  for (const Fn& fn : functions) {
    for (const auto& [x_dtype, y_dtype] : dtypes) {
      // x spans about [-8, 8] around a random zero point; y covers the function's range over it.
      const float x_scale = 16.0f / 255.0f * std::uniform_real_distribution<float>(0.5f, 1.5f)(rng);
      const int32_t x_lo = x_dtype == DType::kU8 ? 0 : -128;
      const QParams qx =
          QParams::PerTensor(x_dtype, x_scale, x_lo + 128 + std::uniform_int_distribution<int32_t>(-40, 40)(rng))
              .value();
      const reference::LookupFunction f = reference::ParseLookupFunction(fn.name).value();
      float f_lo = std::numeric_limits<float>::infinity(), f_hi = -f_lo;
      for (int32_t c = qx.quant_min(); c <= qx.quant_max(); ++c) {
        const float v = reference::ApplyLookupFunction(f, fn.alpha, fn.beta,
                                                       static_cast<float>(c - qx.zero_point()) * qx.scale());
        f_lo = std::min(f_lo, v);
        f_hi = std::max(f_hi, v);
      }
      f_lo = std::min(f_lo, 0.0f);
      f_hi = std::max(f_hi, 0.0f);
      const float y_scale = (f_hi - f_lo) / 255.0f * std::uniform_real_distribution<float>(0.9f, 1.0f)(rng);
      const int32_t y_lo = y_dtype == DType::kU8 ? 0 : -128;
      const int32_t y_zp = std::clamp(y_lo + static_cast<int32_t>(std::lround(-f_lo / y_scale)), y_lo, y_lo + 255);
      const QParams qy = QParams::PerTensor(y_dtype, y_scale, y_zp).value();
      reference::QLookupParams p;
      p.function = f;
      p.alpha = fn.alpha;
      p.beta = fn.beta;
      p.x_dtype = x_dtype;
      p.x_scale = qx.scale();
      p.x_zp = qx.zero_point();
      p.y_scale = qy.scale();
      p.y_zp = qy.zero_point();
      p.y_quant_min = qy.quant_min();
      p.y_quant_max = qy.quant_max();
      const std::array<int32_t, 256> table = reference::BuildLookupTable(p);
      const Tensor x = AllCodes(rng, x_dtype, 1000);
      AttributeMap attrs{{"function", std::string(fn.name)}};
      if (fn.set_attrs) {
        attrs.Set("alpha", fn.alpha);
        attrs.Set("beta", fn.beta);
      }
      INFO(fn.name << " " << DTypeName(x_dtype) << " -> " << DTypeName(y_dtype) << ", X " << qx.ToString() << ", Y "
                   << qy.ToString());
      for (int threads : {1, 2}) {
        const Tensor y = testing::RunQOp("QLookup", {{x, qx}}, qy, attrs, Context::ForIsas(DetectedIsas(), threads))
                             .value();
        REQUIRE(y.dtype() == y_dtype);
        REQUIRE(y.shape() == x.shape());
        for (int64_t i = 0; i < x.NumElements(); ++i) {
          const int32_t want = table[static_cast<uint8_t>(testing::CodeAt(x, i))];
          if (testing::CodeAt(y, i) != want) FAIL("element " << i << ": got " << testing::CodeAt(y, i) << ", want " << want);
        }
        CHECK(testing::VariedCodes(y));
      }
      // Float sanity on the table itself: every entry within 1 LSB of the float function.
      for (int byte = 0; byte < 256; ++byte) {
        const int32_t code = x_dtype == DType::kU8 ? byte : static_cast<int8_t>(static_cast<uint8_t>(byte));
        const float xr = static_cast<float>(code - qx.zero_point()) * qx.scale();
        float want = 0.0f;
        const std::string name = fn.name;
        if (name == "HardSwish") want = xr * std::clamp(xr + 3.0f, 0.0f, 6.0f) / 6.0f;
        if (name == "Sigmoid") want = 1.0f / (1.0f + std::exp(-xr));
        if (name == "Tanh") want = std::tanh(xr);
        if (name == "HardSigmoid") want = std::clamp(fn.alpha * xr + fn.beta, 0.0f, 1.0f);
        if (name == "LeakyRelu") want = xr >= 0 ? xr : fn.alpha * xr;
        const float got = static_cast<float>(table[static_cast<size_t>(byte)] - qy.zero_point()) * qy.scale();
        const float y_min = static_cast<float>(qy.quant_min() - qy.zero_point()) * qy.scale();
        const float y_max = static_cast<float>(qy.quant_max() - qy.zero_point()) * qy.scale();
        if (want >= y_min && want <= y_max && std::fabs(got - want) > qy.scale() * 1.001f) {
          FAIL("code " << code << " (x " << xr << "): float " << want << ", table " << got);
        }
      }
    }
  }
}

TEST_CASE("QClamp clamps to the quantized real bounds", "[int8_misc]") {
  auto rng = testing::MakeRng("qclamp_op");
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (int iter = 0; iter < 24; ++iter) {
    const DType dtype = rng() % 2 ? DType::kU8 : DType::kS8;
    const QParams q = testing::RandomActivationQParams(rng, dtype);
    const float r_lo = static_cast<float>(q.quant_min() - q.zero_point()) * q.scale();
    const float r_hi = static_cast<float>(q.quant_max() - q.zero_point()) * q.scale();
    std::uniform_real_distribution<float> u(r_lo - q.scale() * 4, r_hi + q.scale() * 4);
    float min = u(rng), max = u(rng);
    if (min > max) std::swap(min, max);
    AttributeMap attrs;
    switch (iter % 4) {
      case 0: attrs = {{"min", 0.0f}}; min = 0.0f, max = kInf; break;  // Relu
      case 1: attrs = {{"min", min}, {"max", max}}; break;
      case 2: attrs = {{"max", max}}; min = -kInf; break;
      default: attrs = {{"min", min}}; max = kInf; break;
    }
    const float inv = 1.0f / q.scale();
    const int32_t lo = reference::QuantizeValue<int32_t>(min, inv, q.zero_point(), q.quant_min(), q.quant_max());
    const int32_t hi = reference::QuantizeValue<int32_t>(max, inv, q.zero_point(), q.quant_min(), q.quant_max());
    if (iter % 4 == 0) CHECK(lo == q.zero_point());
    const Tensor x = testing::RandomCodes(rng, dtype, Shape{3, 1 + static_cast<int64_t>(rng() % 300)});
    INFO("QClamp " << DTypeName(dtype) << " [" << min << ", " << max << "] -> codes [" << lo << ", " << hi << "], "
                   << q.ToString());
    for (int threads : {1, 2}) {
      const Tensor y = testing::RunQOp("QClamp", {{x, q}}, q, attrs, Context::ForIsas(DetectedIsas(), threads)).value();
      for (int64_t i = 0; i < x.NumElements(); ++i) {
        const int32_t want = std::clamp(testing::CodeAt(x, i), lo, hi);
        if (testing::CodeAt(y, i) != want) FAIL("element " << i << ": got " << testing::CodeAt(y, i) << ", want " << want);
        // Float sanity: the clamp of the real value, to within half an LSB (the bounds are rounded).
        const float real = std::clamp(testing::Dequantized(x, q, i), std::max(min, r_lo), std::min(max, r_hi));
        if (std::fabs(testing::Dequantized(y, q, i) - real) > q.scale() * 0.501f) FAIL("element " << i << " real " << real);
      }
    }
  }
}

TEST_CASE("QLookup and QClamp: errors name the value and the problem", "[int8_misc]") {
  const Context ctx = Context::ForIsas(DetectedIsas(), 1);
  const QParams q = QParams::PerTensor(DType::kU8, 0.1f, 3).value();
  const QParams other = QParams::PerTensor(DType::kU8, 0.1f, 4).value();
  const Tensor x = Tensor::Create(DType::kU8, Shape{4}).value();
  auto error = [&](const std::string& op, const std::optional<QParams>& qx, const std::optional<QParams>& qy,
                   AttributeMap attrs) {
    auto r = testing::RunQOp(op, {{x, qx}}, qy, std::move(attrs), ctx);
    REQUIRE_FALSE(r.ok());
    return r.status().ToString();
  };
  using Catch::Contains;
  CHECK_THAT(error("QLookup", q, q, {{"function", std::string("Mish")}}),
             Contains("failed to compile node 'node' (QLookup)") && Contains("\"Mish\""));
  CHECK_THAT(error("QLookup", q, q, {}), Contains("function"));
  CHECK_THAT(error("QLookup", q, q, {{"function", std::string("LeakyRelu")}, {"alpha", std::nanf("")}}),
             Contains("alpha and beta must be finite"));
  CHECK_THAT(error("QLookup", std::nullopt, q, {{"function", std::string("Tanh")}}), Contains("input 0 (X) 'in0' has no qparams"));
  CHECK_THAT(error("QClamp", q, other, {{"min", 0.0f}}), Contains("output qparams equal to the input's"));
  CHECK_THAT(error("QClamp", q, q, {{"min", 2.0f}, {"max", 1.0f}}), Contains("min 2 and max 1"));
  CHECK_THAT(error("QClamp", q, std::nullopt, {}), Contains("output 0 (Y) 'out' has no qparams"));
}

}  // namespace
}  // namespace octet
