// Issue 22's operators (comparisons, logic, Where, Max/Min/Sum/Mean, PRelu, Mod, the new unary functions, Expand,
// Tile, Range) against per-element references computed by index arithmetic, hand-computed values and error messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::Const;
using testing::In;

// Shapes that broadcast together: from a common output shape, each operand drops leading dims and sets some dims to 1.
std::vector<Shape> BroadcastShapesFor(std::mt19937_64& rng, int count) {
  const int rank = static_cast<int>(testing::RandomDim(rng, 0, 5));
  std::vector<int64_t> out;
  for (int i = 0; i < rank; ++i) out.push_back(testing::RandomDim(rng, 1, 4));
  std::vector<Shape> shapes;
  for (int k = 0; k < count; ++k) {
    std::vector<int64_t> d(out.begin() + testing::RandomDim(rng, 0, rank), out.end());
    for (int64_t& x : d) {
      if (rng() % 3 == 0) x = 1;
    }
    shapes.emplace_back(d);
  }
  return shapes;
}

// Row-major index of `shape` (right-aligned, broadcast) for the output multi-index `idx`.
int64_t OffsetIn(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  const int shift = static_cast<int>(idx.size()) - shape.rank();
  for (int d = 0; d < shape.rank(); ++d) {
    off = off * shape.dim(d) + (shape.dim(d) == 1 ? 0 : idx[static_cast<size_t>(d + shift)]);
  }
  return off;
}

Shape BroadcastRef(const std::vector<Shape>& shapes) {
  int rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.rank());
  std::vector<int64_t> out(static_cast<size_t>(rank), 1);
  for (const Shape& s : shapes) {
    for (int d = 0; d < s.rank(); ++d) {
      int64_t& o = out[static_cast<size_t>(d + rank - s.rank())];
      if (s.dim(d) != 1) o = s.dim(d);
    }
  }
  return Shape(out);
}

Tensor U8Tensor(const Shape& shape, const std::vector<uint8_t>& values) {
  return Tensor::FromValues<uint8_t>(shape, values).value();
}

// Random f32 values drawn from a few integers, so that equal elements (and NaN) occur often.
Tensor FewValues(std::mt19937_64& rng, const Shape& shape, bool with_nan) {
  Tensor t = Tensor::Create(DType::kF32, shape).value();
  for (float& v : t.values<float>()) {
    const int r = static_cast<int>(rng() % 5);
    v = with_nan && r == 4 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(r) - 1.5f * (r % 2);
  }
  return t;
}

TEST_CASE("comparisons broadcast, write u8 0/1 and are false on NaN", "[float_ops][user_ops]") {
  auto rng = testing::MakeRng("compare");
  const std::vector<std::pair<const char*, bool (*)(float, float)>> ops = {
      {"Equal", [](float a, float b) { return a == b; }},
      {"Less", [](float a, float b) { return a < b; }},
      {"Greater", [](float a, float b) { return a > b; }},
      {"LessOrEqual", [](float a, float b) { return a <= b; }},
      {"GreaterOrEqual", [](float a, float b) { return a >= b; }},
  };
  int trues = 0, falses = 0;
  for (int iter = 0; iter < 50; ++iter) {
    const std::vector<Shape> s = BroadcastShapesFor(rng, 2);
    // Not a structured binding: clang 14 cannot capture one in the lambda below.
    const char* op = ops[static_cast<size_t>(iter) % ops.size()].first;
    bool (*f)(float, float) = ops[static_cast<size_t>(iter) % ops.size()].second;
    Tensor a = FewValues(rng, s[0], iter % 3 == 0);
    Tensor b = FewValues(rng, s[1], false);
    // s32 operands on odd iterations: the same values rounded down.
    const bool integer = iter % 2 == 1;
    if (integer) {
      for (Tensor* t : {&a, &b}) {
        std::vector<int32_t> v;
        for (float x : t->values<float>()) v.push_back(std::isnan(x) ? 7 : static_cast<int32_t>(std::floor(x)));
        *t = testing::IntTensor(t->shape(), v);
      }
    }
    auto y = testing::RunFloatOp(op, {In(a), iter % 4 == 1 ? Const(b) : In(b)}, {}, 1, 1 + iter % 3);
    INFO(op << " " << s[0].ToString() << " " << s[1].ToString() << (integer ? " s32" : " f32"));
    REQUIRE(y.ok());
    const Shape out = BroadcastRef(s);
    REQUIRE((*y)[0].shape() == out);
    REQUIRE((*y)[0].dtype() == DType::kU8);
    testing::ForEachIndex(out, [&](int64_t i, const std::vector<int64_t>& idx) {
      const float x = integer ? static_cast<float>(a.data<int32_t>()[OffsetIn(a.shape(), idx)])
                              : a.data<float>()[OffsetIn(a.shape(), idx)];
      const float z = integer ? static_cast<float>(b.data<int32_t>()[OffsetIn(b.shape(), idx)])
                              : b.data<float>()[OffsetIn(b.shape(), idx)];
      const uint8_t want = f(x, z) ? 1 : 0;
      (want ? trues : falses)++;
      if ((*y)[0].data<uint8_t>()[i] != want) FAIL("element " << i << ": " << x << " vs " << z);
    });
  }
  CHECK(trues > 20);  // both outcomes occur often, whatever the random shapes
  CHECK(falses > 20);

  auto mixed =
      testing::RunFloatOp("Less", {In(testing::FloatTensor({2}, {1, 2})), In(testing::IntTensor({2}, {1, 2}))});
  REQUIRE_FALSE(mixed.ok());
  CHECK_THAT(mixed.status().message(), Catch::Contains("must have one dtype, got f32 and s32"));
  auto bad = testing::RunFloatOp("Equal", {In(testing::FloatTensor({2, 3}, std::vector<float>(6, 0.0f))),
                                           In(testing::FloatTensor({4}, std::vector<float>(4, 0.0f)))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("cannot be broadcast"));
}

TEST_CASE("comparisons of u8 and s8 compare the stored values; empty outputs are fine", "[float_ops][user_ops]") {
  auto y = testing::RunFloatOp("Greater", {In(U8Tensor({4}, {0, 200, 255, 7})), In(U8Tensor({1}, {100}))});
  REQUIRE(y.ok());
  CHECK((*y)[0].values<uint8_t>()[0] == 0);
  CHECK((*y)[0].values<uint8_t>()[1] == 1);
  CHECK((*y)[0].values<uint8_t>()[2] == 1);
  CHECK((*y)[0].values<uint8_t>()[3] == 0);
  Tensor s8a = Tensor::FromValues<int8_t>(Shape{3}, std::vector<int8_t>{-128, 0, 127}).value();
  Tensor s8b = Tensor::FromValues<int8_t>(Shape{3}, std::vector<int8_t>{-128, -1, 126}).value();
  auto e = testing::RunFloatOp("LessOrEqual", {In(s8a), In(s8b)});
  REQUIRE(e.ok());
  CHECK((*e)[0].values<uint8_t>()[0] == 1);
  CHECK((*e)[0].values<uint8_t>()[1] == 0);
  CHECK((*e)[0].values<uint8_t>()[2] == 0);
  auto empty = testing::RunFloatOp(
      "Equal", {In(Tensor::Create(DType::kF32, Shape{0, 3}).value()), In(testing::FloatTensor({3}, {1, 2, 3}))});
  REQUIRE(empty.ok());
  CHECK((*empty)[0].shape() == Shape{0, 3});
}

TEST_CASE("And, Or, Xor and Not follow their truth tables with broadcasting", "[float_ops][user_ops]") {
  // a is [4, 1]: 0, 1, 2 (a nonzero byte is true), 0; b is [3]: 0, 1, 1.
  Tensor a = U8Tensor({4, 1}, {0, 1, 2, 0});
  Tensor b = U8Tensor({3}, {0, 1, 1});
  const std::vector<std::pair<const char*, bool (*)(bool, bool)>> ops = {
      {"And", [](bool p, bool q) { return p && q; }},
      {"Or", [](bool p, bool q) { return p || q; }},
      {"Xor", [](bool p, bool q) { return p != q; }},
  };
  for (const auto& [op, f] : ops) {
    auto y = testing::RunFloatOp(op, {In(a), In(b)});
    REQUIRE(y.ok());
    REQUIRE((*y)[0].shape() == Shape{4, 3});
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        INFO(op << " " << i << " " << j);
        CHECK((*y)[0].data<uint8_t>()[i * 3 + j] == (f(a.data<uint8_t>()[i] != 0, b.data<uint8_t>()[j] != 0) ? 1 : 0));
      }
    }
  }
  auto n = testing::RunFloatOp("Not", {In(a)});
  REQUIRE(n.ok());
  CHECK((*n)[0].values<uint8_t>()[0] == 1);
  CHECK((*n)[0].values<uint8_t>()[1] == 0);
  CHECK((*n)[0].values<uint8_t>()[2] == 0);
  CHECK((*n)[0].values<uint8_t>()[3] == 1);
  auto bad = testing::RunFloatOp("And", {In(a), In(testing::FloatTensor({3}, {0, 1, 1}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("input 1 (B) must be bool (octet holds BOOL as u8), got f32"));
}

TEST_CASE("Where selects X or Y over three broadcast operands", "[float_ops][user_ops]") {
  auto rng = testing::MakeRng("where");
  for (int iter = 0; iter < 40; ++iter) {
    const std::vector<Shape> s = BroadcastShapesFor(rng, 3);
    Tensor c = Tensor::Create(DType::kU8, s[0]).value();
    for (uint8_t& v : c.values<uint8_t>()) v = static_cast<uint8_t>(rng() % 2);
    const bool integer = iter % 2 == 1;
    Tensor x = testing::RandomTensor(rng, s[1]);
    Tensor z = testing::RandomTensor(rng, s[2], 5.0f, 6.0f);
    if (integer) {
      std::vector<int32_t> vx, vz;
      for (float v : x.values<float>()) vx.push_back(static_cast<int32_t>(v * 100));
      for (float v : z.values<float>()) vz.push_back(static_cast<int32_t>(v * 100));
      x = testing::IntTensor(s[1], vx);
      z = testing::IntTensor(s[2], vz);
    }
    auto y = testing::RunFloatOp("Where", {In(c), In(x), iter % 3 ? In(z) : Const(z)}, {}, 1, 1 + iter % 2);
    INFO(s[0].ToString() << " " << s[1].ToString() << " " << s[2].ToString());
    REQUIRE(y.ok());
    const Shape out = BroadcastRef(s);
    REQUIRE((*y)[0].shape() == out);
    testing::ForEachIndex(out, [&](int64_t i, const std::vector<int64_t>& idx) {
      const bool take_x = c.data<uint8_t>()[OffsetIn(c.shape(), idx)] != 0;
      const Tensor& src = take_x ? x : z;
      const int64_t off = OffsetIn(src.shape(), idx);
      const bool same = integer ? (*y)[0].data<int32_t>()[i] == src.data<int32_t>()[off]
                                : (*y)[0].data<float>()[i] == src.data<float>()[off];
      if (!same) FAIL("element " << i);
    });
  }
  auto bad = testing::RunFloatOp(
      "Where", {In(U8Tensor({1}, {1})), In(testing::FloatTensor({1}, {1})), In(testing::IntTensor({1}, {1}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("X and Y must have one dtype, got f32 and s32"));
  auto cond = testing::RunFloatOp("Where", {In(testing::FloatTensor({1}, {1})), In(testing::FloatTensor({1}, {1})),
                                            In(testing::FloatTensor({1}, {2}))});
  REQUIRE_FALSE(cond.ok());
  CHECK_THAT(cond.status().message(), Catch::Contains("input 0 (condition) must be bool"));
}

TEST_CASE("Max, Min, Sum and Mean fold any number of broadcast inputs", "[float_ops][user_ops]") {
  auto rng = testing::MakeRng("variadic");
  const char* ops[] = {"Max", "Min", "Sum", "Mean"};
  for (int iter = 0; iter < 48; ++iter) {
    const char* op = ops[iter % 4];
    const int count = 1 + iter / 4 % 4;
    const std::vector<Shape> s = BroadcastShapesFor(rng, count);
    std::vector<Tensor> xs;
    std::vector<testing::OpInput> inputs;
    for (int k = 0; k < count; ++k) {
      xs.push_back(testing::RandomTensor(rng, s[static_cast<size_t>(k)], -3.0f, 3.0f));
      inputs.push_back(k == 1 ? Const(xs.back()) : In(xs.back()));
    }
    auto y = testing::RunFloatOp(op, inputs, {}, 1, 1 + iter % 3);
    INFO(op << " with " << count << " inputs");
    REQUIRE(y.ok());
    const Shape out = BroadcastRef(s);
    REQUIRE((*y)[0].shape() == out);
    std::vector<float> want;
    testing::ForEachIndex(out, [&](int64_t, const std::vector<int64_t>& idx) {
      double acc = xs[0].data<float>()[OffsetIn(xs[0].shape(), idx)];
      for (size_t k = 1; k < xs.size(); ++k) {
        const double v = xs[k].data<float>()[OffsetIn(xs[k].shape(), idx)];
        acc = op[1] == 'a' ? std::max(acc, v) : op[1] == 'i' ? std::min(acc, v) : acc + v;
      }
      if (op[1] == 'e') acc /= count;
      want.push_back(static_cast<float>(acc));
    });
    testing::ExpectClose((*y)[0], want, 1e-5f, 1e-5f);
  }
}

TEST_CASE("Max and Min propagate NaN and take integers; Sum refuses them", "[float_ops][user_ops]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = testing::FloatTensor({3}, {nan, 1, 2});
  Tensor b = testing::FloatTensor({3}, {0, nan, 3});
  for (const char* op : {"Max", "Min"}) {
    auto y = testing::RunFloatOp(op, {In(a), In(b)});
    REQUIRE(y.ok());
    CHECK(std::isnan((*y)[0].values<float>()[0]));
    CHECK(std::isnan((*y)[0].values<float>()[1]));
    CHECK((*y)[0].values<float>()[2] == (op[1] == 'a' ? 3.0f : 2.0f));
  }
  auto m = testing::RunFloatOp("Max", {In(U8Tensor({3}, {3, 250, 9})), In(U8Tensor({1}, {200}))});
  REQUIRE(m.ok());
  CHECK((*m)[0].values<uint8_t>()[0] == 200);
  CHECK((*m)[0].values<uint8_t>()[1] == 250);
  CHECK((*m)[0].values<uint8_t>()[2] == 200);
  auto n = testing::RunFloatOp("Min", {In(testing::IntTensor({2}, {-5, 7})), In(testing::IntTensor({2}, {3, -9}))});
  REQUIRE(n.ok());
  CHECK((*n)[0].values<int32_t>()[0] == -5);
  CHECK((*n)[0].values<int32_t>()[1] == -9);
  auto sum = testing::RunFloatOp("Sum", {In(testing::IntTensor({1}, {1})), In(testing::IntTensor({1}, {2}))});
  REQUIRE_FALSE(sum.ok());
  CHECK_THAT(sum.status().message(), Catch::Contains("sum supports f32"));
  auto mixed = testing::RunFloatOp("Max", {In(testing::FloatTensor({1}, {1})), In(testing::IntTensor({1}, {2}))});
  REQUIRE_FALSE(mixed.ok());
  CHECK_THAT(mixed.status().message(), Catch::Contains("input 1 ('in1') has s32"));
}

TEST_CASE("PRelu broadcasts its slope to X's shape only", "[float_ops][user_ops]") {
  auto rng = testing::MakeRng("prelu");
  Tensor x = testing::RandomTensor(rng, Shape{2, 3, 2, 2}, -2.0f, 2.0f);
  Tensor slope = testing::FloatTensor({3, 1, 1}, {0.1f, -0.5f, 2.0f});
  auto y = testing::RunFloatOp("PRelu", {In(x), Const(slope)});
  REQUIRE(y.ok());
  std::vector<float> want;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const float v = x.data<float>()[i];
    want.push_back(v < 0 ? v * slope.data<float>()[i / 4 % 3] : v);
  }
  testing::ExpectClose((*y)[0], want, 0.0f, 0.0f);
  auto per_channel = testing::RunFloatOp("PRelu", {In(x), Const(testing::FloatTensor({3}, {1, 2, 3}))});
  REQUIRE_FALSE(per_channel.ok());
  CHECK_THAT(per_channel.status().message(),
             Catch::Contains("slope shape [3] must broadcast to X's shape [2, 3, 2, 2]"));
  // The output keeps X's shape: a slope that would grow it is refused.
  auto grow = testing::RunFloatOp(
      "PRelu", {In(testing::FloatTensor({2}, {-1, 1})), In(testing::FloatTensor({3, 2}, {1, 2, 3, 4, 5, 6}))});
  REQUIRE_FALSE(grow.ok());
  auto ints = testing::RunFloatOp("PRelu", {In(testing::IntTensor({3}, {-4, 0, 5})), In(testing::IntTensor({1}, {3}))});
  REQUIRE(ints.ok());
  CHECK((*ints)[0].values<int32_t>()[0] == -12);
  CHECK((*ints)[0].values<int32_t>()[1] == 0);
  CHECK((*ints)[0].values<int32_t>()[2] == 5);
}

TEST_CASE("Floor, Ceil, Round (half to even), Sign and the new math functions", "[float_ops][user_ops]") {
  const std::vector<float> v = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.6f, -2.4f, 0.0f};
  Tensor x = testing::FloatTensor({3, 3}, v);
  auto round = testing::RunFloatOp("Round", {In(x)});
  REQUIRE(round.ok());
  testing::ExpectClose((*round)[0], {-2, -2, -0, 0, 2, 2, 3, -2, 0}, 0.0f, 0.0f);
  auto floor = testing::RunFloatOp("Floor", {In(x)});
  REQUIRE(floor.ok());
  testing::ExpectClose((*floor)[0], {-3, -2, -1, 0, 1, 2, 2, -3, 0}, 0.0f, 0.0f);
  auto ceil = testing::RunFloatOp("Ceil", {In(x)});
  REQUIRE(ceil.ok());
  testing::ExpectClose((*ceil)[0], {-2, -1, -0, 1, 2, 3, 3, -2, 0}, 0.0f, 0.0f);
  auto sign = testing::RunFloatOp("Sign", {In(testing::FloatTensor({4}, {-3, 0, 0.25f, NAN}))});
  REQUIRE(sign.ok());
  testing::ExpectClose((*sign)[0], {-1, 0, 1, NAN}, 0.0f, 0.0f);
  auto isign = testing::RunFloatOp("Sign", {In(testing::IntTensor({3}, {-7, 0, 9}))});
  REQUIRE(isign.ok());
  CHECK((*isign)[0].values<int32_t>()[0] == -1);
  CHECK((*isign)[0].values<int32_t>()[1] == 0);
  CHECK((*isign)[0].values<int32_t>()[2] == 1);

  auto rng = testing::MakeRng("user_unary");
  Tensor r = testing::RandomTensor(rng, Shape{5, 13}, -5.0f, 5.0f);
  struct Case {
    const char* op;
    AttributeMap attrs;
    double (*f)(double);
  };
  const std::vector<Case> cases = {
      {"Sin", {}, [](double t) { return std::sin(t); }},
      {"Cos", {}, [](double t) { return std::cos(t); }},
      {"Softplus", {}, [](double t) { return std::log(1 + std::exp(t)); }},
      {"Elu", {}, [](double t) { return t < 0 ? std::exp(t) - 1 : t; }},
      {"Elu", {{"alpha", 0.5f}}, [](double t) { return t < 0 ? 0.5 * (std::exp(t) - 1) : t; }},
      {"Selu", {}, [](double t) { return 1.0507009873554805 * (t > 0 ? t : 1.6732632423543772 * (std::exp(t) - 1)); }},
      {"Selu",
       {{"alpha", 2.0f}, {"gamma", 3.0f}},
       [](double t) { return 3.0 * (t > 0 ? t : 2.0 * (std::exp(t) - 1)); }},
  };
  for (const Case& c : cases) {
    auto y = testing::RunFloatOp(c.op, {In(r)}, c.attrs);
    INFO(c.op);
    REQUIRE(y.ok());
    std::vector<float> want;
    for (float t : r.values<float>()) want.push_back(static_cast<float>(c.f(t)));
    testing::ExpectClose((*y)[0], want, 1e-6f, 1e-5f);
  }
  // Softplus neither overflows for large x nor loses small values for very negative x.
  auto sp = testing::RunFloatOp("Softplus", {In(testing::FloatTensor({2}, {100.0f, -30.0f}))});
  REQUIRE(sp.ok());
  testing::ExpectClose((*sp)[0], {100.0f, static_cast<float>(std::exp(-30.0))}, 0.0f, 1e-5f);
}

TEST_CASE("Mod takes the divisor's sign by default and the dividend's with fmod=1", "[float_ops][user_ops]") {
  Tensor a = testing::IntTensor({6}, {7, -7, 7, -7, 0, INT32_MIN});
  Tensor b = testing::IntTensor({6}, {3, 3, -3, -3, 5, -1});
  auto py = testing::RunFloatOp("Mod", {In(a), In(b)});
  REQUIRE(py.ok());
  const std::vector<int32_t> want_py = {1, 2, -2, -1, 0, 0};
  for (size_t i = 0; i < want_py.size(); ++i) CHECK((*py)[0].values<int32_t>()[i] == want_py[i]);
  auto c = testing::RunFloatOp("Mod", {In(a), In(b)}, {{"fmod", 1}});
  REQUIRE(c.ok());
  const std::vector<int32_t> want_c = {1, -1, 1, -1, 0, 0};
  for (size_t i = 0; i < want_c.size(); ++i) CHECK((*c)[0].values<int32_t>()[i] == want_c[i]);
  // Broadcast f32 with fmod=1 against std::fmod.
  Tensor fa = testing::FloatTensor({2, 3}, {5.5f, -5.5f, 4.0f, -0.75f, 9.0f, -9.0f});
  Tensor fb = testing::FloatTensor({3}, {2.0f, -2.0f, 1.5f});
  auto f = testing::RunFloatOp("Mod", {In(fa), In(fb)}, {{"fmod", 1}});
  REQUIRE(f.ok());
  std::vector<float> want;
  for (int64_t i = 0; i < 6; ++i) want.push_back(std::fmod(fa.data<float>()[i], fb.data<float>()[i % 3]));
  testing::ExpectClose((*f)[0], want, 0.0f, 0.0f);
  Tensor u = U8Tensor({2}, {250, 9});
  auto um = testing::RunFloatOp("Mod", {In(u), In(U8Tensor({1}, {7}))});
  REQUIRE(um.ok());
  CHECK((*um)[0].values<uint8_t>()[0] == 5);
  CHECK((*um)[0].values<uint8_t>()[1] == 2);

  auto float_python = testing::RunFloatOp("Mod", {In(fa), In(fb)});
  REQUIRE_FALSE(float_python.ok());
  CHECK_THAT(float_python.status().message(), Catch::Contains("attribute 'fmod' must be 1 for float inputs"));
  auto bad_attr = testing::RunFloatOp("Mod", {In(a), In(b)}, {{"fmod", 2}});
  REQUIRE_FALSE(bad_attr.ok());
  CHECK_THAT(bad_attr.status().message(), Catch::Contains("attribute 'fmod' must be 0 or 1, got 2"));
  auto zero = testing::RunFloatOp("Mod", {In(a), In(testing::IntTensor({1}, {0}))});
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("integer Mod by zero"));
}

TEST_CASE("Expand broadcasts to a shape both ways; Tile repeats along each axis", "[float_ops][user_ops]") {
  Tensor x = testing::FloatTensor({3, 1}, {1, 2, 3});
  // A 1 in `shape` keeps the input's 3; the output gains a leading 2 and the trailing 1 grows to 4.
  auto y = testing::RunFloatOp("Expand", {In(x), Const(testing::IntTensor({3}, {2, 1, 4}))});
  REQUIRE(y.ok());
  REQUIRE((*y)[0].shape() == Shape{2, 3, 4});
  std::vector<float> want;
  for (int n = 0; n < 2; ++n) {
    for (float v : {1.0f, 2.0f, 3.0f}) want.insert(want.end(), 4, v);
  }
  testing::ExpectClose((*y)[0], want, 0.0f, 0.0f);
  // A shorter `shape` and a u8 input.
  auto u =
      testing::RunFloatOp("Expand", {In(U8Tensor({2, 1, 2}, {1, 2, 3, 4})), Const(testing::IntTensor({2}, {3, 1}))});
  REQUIRE(u.ok());
  REQUIRE((*u)[0].shape() == Shape{2, 3, 2});
  const std::vector<uint8_t> want_u = {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4};
  for (size_t i = 0; i < want_u.size(); ++i) CHECK((*u)[0].values<uint8_t>()[i] == want_u[i]);
  auto bad = testing::RunFloatOp("Expand", {In(x), Const(testing::IntTensor({2}, {2, 2}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("input 0's shape [3, 1] cannot be expanded to shape [2, 2]"));
  // The shape fed at run time: each row of x repeated twice.
  auto runtime = testing::RunFloatOp("Expand", {In(x), In(testing::IntTensor({2}, {3, 2}))});
  REQUIRE(runtime.ok());
  REQUIRE((*runtime)[0].shape() == Shape{3, 2});
  testing::ExpectClose((*runtime)[0], {1, 1, 2, 2, 3, 3}, 0, 0);

  Tensor t = testing::IntTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  auto tiled = testing::RunFloatOp("Tile", {In(t), Const(testing::IntTensor({2}, {2, 2}))});
  REQUIRE(tiled.ok());
  REQUIRE((*tiled)[0].shape() == Shape{4, 6});
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      CHECK((*tiled)[0].data<int32_t>()[i * 6 + j] == t.data<int32_t>()[(i % 2) * 3 + j % 3]);
    }
  }
  auto rng = testing::MakeRng("tile");
  Tensor r = testing::RandomTensor(rng, Shape{2, 1, 3});
  auto big = testing::RunFloatOp("Tile", {In(r), Const(testing::IntTensor({3}, {3, 4, 1}))}, {}, 1, 3);
  REQUIRE(big.ok());
  REQUIRE((*big)[0].shape() == Shape{6, 4, 3});
  testing::ForEachIndex(Shape{6, 4, 3}, [&](int64_t i, const std::vector<int64_t>& idx) {
    if ((*big)[0].data<float>()[i] != r.data<float>()[(idx[0] % 2) * 3 + idx[2]]) FAIL("element " << i);
  });
  auto none = testing::RunFloatOp("Tile", {In(t), Const(testing::IntTensor({2}, {0, 5}))});
  REQUIRE(none.ok());
  CHECK((*none)[0].shape() == Shape{0, 15});
  auto wrong = testing::RunFloatOp("Tile", {In(t), Const(testing::IntTensor({1}, {2}))});
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.status().message(),
             Catch::Contains("input 1 (repeats) must have one value per input axis (2), got [2]"));
}

TEST_CASE("Range computes its length as ceil((limit - start) / delta)", "[float_ops][user_ops]") {
  auto scalar = [](int32_t v) { return Const(testing::IntTensor(Shape{}, {v})); };
  auto fscalar = [](float v) { return Const(testing::FloatTensor(Shape{}, {v})); };
  auto i = testing::RunFloatOp("Range", {scalar(10), scalar(-3), scalar(-4)});
  REQUIRE(i.ok());
  REQUIRE((*i)[0].shape() == Shape{4});
  const std::vector<int32_t> want_i = {10, 6, 2, -2};
  for (size_t k = 0; k < want_i.size(); ++k) CHECK((*i)[0].values<int32_t>()[k] == want_i[k]);
  auto f = testing::RunFloatOp("Range", {fscalar(1.0f), fscalar(2.0f), fscalar(0.25f)});
  REQUIRE(f.ok());
  testing::ExpectClose((*f)[0], {1.0f, 1.25f, 1.5f, 1.75f}, 0.0f, 0.0f);
  auto empty = testing::RunFloatOp("Range", {scalar(5), scalar(1), scalar(1)});
  REQUIRE(empty.ok());
  CHECK((*empty)[0].shape() == Shape{0});
  auto zero = testing::RunFloatOp("Range", {scalar(0), scalar(1), scalar(0)});
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("input 2 (delta) must not be 0"));
  // The limit fed at run time fixes the length per run.
  auto runtime = testing::RunFloatOp("Range", {scalar(0), In(testing::IntTensor(Shape{}, {4})), scalar(1)});
  REQUIRE(runtime.ok());
  REQUIRE((*runtime)[0].shape() == Shape{4});
  for (int32_t k = 0; k < 4; ++k) CHECK((*runtime)[0].values<int32_t>()[k] == k);
  auto huge = testing::RunFloatOp("Range", {fscalar(0.0f), fscalar(INFINITY), fscalar(1.0f)});
  REQUIRE_FALSE(huge.ok());
}

}  // namespace
}  // namespace octet
