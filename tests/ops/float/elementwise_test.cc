// Binary operators with numpy broadcasting and the unary functions, against per-element references.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::Const;
using testing::In;

// Random shape pairs that broadcast: from a common output shape, each operand drops leading dims and sets some
// dims to 1.
std::pair<Shape, Shape> BroadcastPair(std::mt19937_64& rng) {
  const int rank = static_cast<int>(testing::RandomDim(rng, 0, 5));
  std::vector<int64_t> out;
  for (int i = 0; i < rank; ++i) out.push_back(testing::RandomDim(rng, 1, 5));
  auto derive = [&]() {
    std::vector<int64_t> d(out.begin() + testing::RandomDim(rng, 0, rank), out.end());
    for (int64_t& x : d) {
      if (rng() % 3 == 0) x = 1;
    }
    return Shape(d);
  };
  return {derive(), derive()};
}

float ElementAt(const Tensor& t, const std::vector<int64_t>& out_index) {
  // Index of `t` broadcast into an output index (aligned to the right).
  const Shape& s = t.shape();
  int64_t off = 0;
  const int shift = static_cast<int>(out_index.size()) - s.rank();
  for (int d = 0; d < s.rank(); ++d) {
    off = off * s.dim(d) + (s.dim(d) == 1 ? 0 : out_index[static_cast<size_t>(d + shift)]);
  }
  return t.data<float>()[off];
}

TEST_CASE("Add, Sub, Mul, Div and Pow broadcast like numpy", "[float_ops]") {
  auto rng = testing::MakeRng("binary");
  const std::vector<std::pair<const char*, float (*)(float, float)>> ops = {
      {"Add", [](float a, float b) { return a + b; }},
      {"Sub", [](float a, float b) { return a - b; }},
      {"Mul", [](float a, float b) { return a * b; }},
      {"Div", [](float a, float b) { return a / b; }},
      {"Pow", [](float a, float b) { return std::pow(a, b); }},
  };
  for (int iter = 0; iter < 60; ++iter) {
    auto [sa, sb] = BroadcastPair(rng);
    const auto& [op, f] = ops[static_cast<size_t>(iter) % ops.size()];
    const bool pow = std::string(op) == "Pow";
    Tensor a = testing::RandomTensor(rng, sa, pow ? 0.1f : -2.0f, 2.0f);
    Tensor b = testing::RandomTensor(rng, sb, pow ? -2.0f : 0.5f, 2.0f);
    auto y = testing::RunFloatOp(op, {In(a), iter % 2 ? Const(b) : In(b)}, {}, 1, 1 + iter % 3);
    INFO(op << " " << sa.ToString() << " " << sb.ToString());
    REQUIRE(y.ok());
    const Shape& out = (*y)[0].shape();
    REQUIRE(out.rank() == std::max(sa.rank(), sb.rank()));
    std::vector<float> want;
    testing::ForEachIndex(out, [&, &f = f](int64_t, const std::vector<int64_t>& idx) {
      want.push_back(f(ElementAt(a, idx), ElementAt(b, idx)));
    });
    testing::ExpectClose((*y)[0], want, 1e-6f, 1e-6f);
  }
  auto bad = testing::RunFloatOp("Add", {In(testing::RandomTensor(rng, Shape{2, 3})),
                                         In(testing::RandomTensor(rng, Shape{4}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("cannot be broadcast"));
}

TEST_CASE("Integer Add/Mul/Div for shape arithmetic", "[float_ops]") {
  Tensor a = testing::IntTensor(Shape{3}, {7, -7, 100});
  Tensor b = testing::IntTensor(Shape{1}, {2});
  auto div = testing::RunFloatOp("Div", {In(a), In(b)});
  REQUIRE(div.ok());
  CHECK(std::vector<int32_t>((*div)[0].data<int32_t>(), (*div)[0].data<int32_t>() + 3) ==
        std::vector<int32_t>{3, -3, 50});
  auto zero = testing::RunFloatOp("Div", {In(a), In(testing::IntTensor(Shape{1}, {0}))});
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("division by zero"));
  auto mixed = testing::RunFloatOp("Add", {In(a), In(testing::FloatTensor(Shape{1}, {1.0f}))});
  REQUIRE_FALSE(mixed.ok());
  CHECK_THAT(mixed.status().message(), Catch::Contains("inputs must have one dtype, got s32 and f32"));
  // Pow's exponent may have a dtype of its own; the output has the base's (an integer base truncates).
  auto pow = testing::RunFloatOp("Pow", {In(testing::FloatTensor(Shape{1}, {2.0f})), In(b)});
  REQUIRE(pow.ok());
  REQUIRE((*pow)[0].dtype() == DType::kF32);
  CHECK((*pow)[0].data<float>()[0] == 4.0f);
  auto ipow = testing::RunFloatOp("Pow", {In(a), In(testing::FloatTensor(Shape{1}, {0.5f}))});
  REQUIRE(ipow.ok());
  REQUIRE((*ipow)[0].dtype() == DType::kS32);
  CHECK((*ipow)[0].data<int32_t>()[0] == 2);    // sqrt(7) = 2.65 truncated
  CHECK((*ipow)[0].data<int32_t>()[2] == 10);   // sqrt(100)
  // u8 arithmetic wraps modulo 256, as ONNX's uint8 does.
  auto bytes = [](std::vector<uint8_t> v) {
    Tensor t = Tensor::Create(DType::kU8, Shape{static_cast<int64_t>(v.size())}).value();
    std::copy(v.begin(), v.end(), t.data<uint8_t>());
    return t;
  };
  auto u8 = testing::RunFloatOp("Add", {In(bytes({250, 3})), In(bytes({10}))});
  REQUIRE(u8.ok());
  CHECK((*u8)[0].data<uint8_t>()[0] == 4);
  CHECK((*u8)[0].data<uint8_t>()[1] == 13);
}

TEST_CASE("Unary functions and activations match their formulas", "[float_ops]") {
  auto rng = testing::MakeRng("unary");
  Tensor x = testing::RandomTensor(rng, Shape{3, 7, 11}, -6.0f, 6.0f);
  const float kSqrt2 = std::sqrt(2.0f);
  struct Case {
    const char* op;
    AttributeMap attrs;
    std::function<double(double)> f;
  };
  const std::vector<Case> cases = {
      {"Relu", {}, [](double v) { return v > 0 ? v : 0.0; }},
      {"Sigmoid", {}, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {"Tanh", {}, [](double v) { return std::tanh(v); }},
      {"LeakyRelu", {{"alpha", 0.1f}}, [](double v) { return v < 0 ? 0.1f * v : v; }},
      {"LeakyRelu", {}, [](double v) { return v < 0 ? 0.01f * v : v; }},
      {"HardSigmoid", {}, [](double v) { return std::clamp(0.2 * v + 0.5, 0.0, 1.0); }},
      {"HardSigmoid", {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}, [](double v) { return std::clamp(v / 6 + 0.5, 0.0, 1.0); }},
      {"HardSwish", {}, [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); }},
      {"Gelu", {}, [&](double v) { return 0.5 * v * (1 + std::erf(v / kSqrt2)); }},
      {"Gelu", {{"approximate", "tanh"}},
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))); }},
      {"Erf", {}, [](double v) { return std::erf(v); }},
      {"Exp", {}, [](double v) { return std::exp(v); }},
      {"Neg", {}, [](double v) { return -v; }},
      {"Abs", {}, [](double v) { return std::fabs(v); }},
  };
  for (const Case& c : cases) {
    auto y = testing::RunFloatOp(c.op, {In(x)}, c.attrs, 1, 2);
    INFO(c.op);
    REQUIRE(y.ok());
    std::vector<float> want;
    for (float v : x.values<float>()) want.push_back(static_cast<float>(c.f(v)));
    REQUIRE(testing::NotConstant(want));
    testing::ExpectClose((*y)[0], want, 1e-6f, 2e-6f);
  }
  Tensor pos = testing::RandomTensor(rng, Shape{50}, 0.01f, 9.0f);
  for (const char* op : {"Sqrt", "Log", "Reciprocal"}) {
    auto y = testing::RunFloatOp(op, {In(pos)});
    REQUIRE(y.ok());
    std::vector<float> want;
    for (float v : pos.values<float>()) {
      want.push_back(std::string(op) == "Sqrt" ? std::sqrt(v) : std::string(op) == "Log" ? std::log(v) : 1.0f / v);
    }
    testing::ExpectClose((*y)[0], want, 1e-6f, 1e-6f);
  }
  auto bad = testing::RunFloatOp("Gelu", {In(x)}, {{"approximate", "cubic"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("approximate"));
}

TEST_CASE("Clip takes optional constant bounds", "[float_ops]") {
  Tensor x = testing::FloatTensor(Shape{5}, {-3.0f, -0.5f, 0.5f, 4.0f, 7.0f});
  Tensor lo = testing::FloatTensor(Shape{}, {0.0f});
  Tensor hi = testing::FloatTensor(Shape{}, {6.0f});
  auto relu6 = testing::RunFloatOp("Clip", {In(x), Const(lo), Const(hi)});
  REQUIRE(relu6.ok());
  testing::ExpectClose((*relu6)[0], {0.0f, 0.0f, 0.5f, 4.0f, 6.0f}, 0, 0);
  auto upper = testing::RunFloatOp("Clip", {In(x), testing::Absent(), Const(hi)});
  REQUIRE(upper.ok());
  testing::ExpectClose((*upper)[0], {-3.0f, -0.5f, 0.5f, 4.0f, 6.0f}, 0, 0);
  auto none = testing::RunFloatOp("Clip", {In(x)});
  REQUIRE(none.ok());
  testing::ExpectClose((*none)[0], testing::Values(x), 0, 0);
  // A bound computed at run time is read per call.
  auto runtime_bound = testing::RunFloatOp("Clip", {In(x), In(lo)});
  REQUIRE(runtime_bound.ok());
  std::vector<float> want_lo;
  for (float v : testing::Values(x)) want_lo.push_back(std::max(v, 0.0f));
  testing::ExpectClose((*runtime_bound)[0], want_lo, 0, 0);
  auto inverted = testing::RunFloatOp("Clip", {In(x), Const(hi), Const(lo)});
  REQUIRE_FALSE(inverted.ok());
}

TEST_CASE("Cast rounds half to even and saturates", "[float_ops]") {
  Tensor x = testing::FloatTensor(Shape{6}, {2.5f, 3.5f, -2.5f, 300.0f, -300.0f, NAN});
  auto u8 = testing::RunFloatOp("Cast", {In(x)}, {{"to", 2}});
  REQUIRE(u8.ok());
  const uint8_t* p = (*u8)[0].data<uint8_t>();
  CHECK(std::vector<int>(p, p + 6) == std::vector<int>{2, 4, 0, 255, 0, 0});
  auto s32 = testing::RunFloatOp("Cast", {In(x)}, {{"to", 7}});
  REQUIRE(s32.ok());
  CHECK((*s32)[0].data<int32_t>()[2] == -2);
  auto back = testing::RunFloatOp("Cast", {In(testing::IntTensor(Shape{2}, {-4, 9}))}, {{"to", 1}});
  REQUIRE(back.ok());
  testing::ExpectClose((*back)[0], {-4.0f, 9.0f}, 0, 0);
  // DOUBLE is held as f32; FLOAT16 rounds to the nearest half value (ties to even, 1 + 2^-11 is a tie between 1
  // and 1 + 2^-10), infinite beyond 65504; BOOL is 1 for any non-zero value, NaN included.
  auto f64 = testing::RunFloatOp("Cast", {In(x)}, {{"to", 11}});
  REQUIRE(f64.ok());
  CHECK((*f64)[0].data<float>()[0] == 2.5f);
  Tensor h = testing::FloatTensor(Shape{4}, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 70000.0f, 0x1p-25f * 3});
  auto f16 = testing::RunFloatOp("Cast", {In(h)}, {{"to", 10}});
  REQUIRE(f16.ok());
  const float* ph = (*f16)[0].data<float>();
  CHECK(ph[0] == 1.0f);
  CHECK(ph[1] == 1.0f + 0x1p-9f);
  CHECK(std::isinf(ph[2]));
  CHECK(ph[3] == 0x1p-23f);  // 1.5 subnormal steps (of 2^-24) are a tie: to even, 2 steps
  // BFLOAT16 keeps 7 fraction bits: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 (to even: 1), 1 + 3 * 2^-8 a tie
  // between 1 + 2^-7 and 1 + 2^-6 (to even: 1 + 2^-6); 3.4e38 rounds past the largest (0x1.fep127) to infinity.
  Tensor bf = testing::FloatTensor(Shape{6},
                                   {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 3.4e38f, -0.75f, 1.0f + 0x1p-7f + 0x1p-12f, NAN});
  auto bf16 = testing::RunFloatOp("Cast", {In(bf)}, {{"to", 16}});
  REQUIRE(bf16.ok());
  REQUIRE((*bf16)[0].dtype() == DType::kF32);
  const float* pbf = (*bf16)[0].data<float>();
  CHECK(pbf[0] == 1.0f);
  CHECK(pbf[1] == 1.0f + 0x1p-6f);
  CHECK(std::isinf(pbf[2]));
  CHECK(pbf[3] == -0.75f);
  CHECK(pbf[4] == 1.0f + 0x1p-7f);
  CHECK(std::isnan(pbf[5]));
  auto b = testing::RunFloatOp("Cast", {In(x)}, {{"to", 9}});
  REQUIRE(b.ok());
  const uint8_t* pb = (*b)[0].data<uint8_t>();
  CHECK(std::vector<int>(pb, pb + 6) == std::vector<int>{1, 1, 1, 1, 1, 1});
  REQUIRE_FALSE(testing::RunFloatOp("Cast", {In(x)}, {{"to", 8}}).ok());  // string
}

}  // namespace
}  // namespace octet
