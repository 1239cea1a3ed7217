// QAdd and QMul: hand-computed cases of both schemes (including the tie where fp32's half-even and q31's half-away
// rounding differ); the operators against the scalar reference on randomized shapes with broadcasting, u8 and s8,
// fp32 and q31, with and without Relu, at 1 and 2 threads on every runnable ISA; a float sanity check; the qvadd
// kernels against the reference; and the errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/reference/qelementwise_reference.h"
#include "ops/ukernels/lut.h"
#include "ops/ukernels/qvadd.h"
#include "tests/ops/int8/qmisc_op_tester.h"

namespace octet {
namespace {

using testing::QInput;

QParams U8(float scale, int32_t zp) { return QParams::PerTensor(DType::kU8, scale, zp).value(); }

Tensor QAddU8Tensor(const Shape& shape, const std::vector<uint8_t>& v) {
  return Tensor::FromValues<uint8_t>(shape, v).value();
}

std::vector<int32_t> Codes(const Tensor& t) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.push_back(testing::CodeAt(t, i));
  return v;
}

TEST_CASE("QAdd and QMul: hand-computed cases, fp32 ties to even and q31 ties away", "[int8_misc]") {
  const Context ctx = Context::ForIsas(DetectedIsas(), 1);
  // a: scale 0.5, zp 10; b: scale 0.25, zp 20; y: scale 1, zp 0.
  // a = 14 (2.0) + b = 28 (2.0) = 4; a = 11 (0.5) + b = 20 (0) = 0.5; a = 13 (1.5) + b = 20 = 1.5; a = 8 (-1) +
  // b = 24 (1) = 0 (and -1.0 clamps to 0 in u8 for a = 6, b = 20).
  const Tensor a = QAddU8Tensor(Shape{5}, {14, 11, 13, 8, 6});
  const Tensor b = QAddU8Tensor(Shape{5}, {28, 20, 20, 24, 20});
  const std::vector<QInput> in = {{a, U8(0.5f, 10)}, {b, U8(0.25f, 20)}};
  const Tensor fp32 = testing::RunQOp("QAdd", in, U8(1.0f, 0), {}, ctx).value();
  CHECK(Codes(fp32) == std::vector<int32_t>{4, 0, 2, 0, 0});
  const Tensor q31 = testing::RunQOp("QAdd", in, U8(1.0f, 0), {{"requantization", std::string("q31")}}, ctx).value();
  CHECK(Codes(q31) == std::vector<int32_t>{4, 1, 2, 0, 0});
  // Relu with y zp 3: real -1 (code 2) is raised to the zero point.
  const Tensor relu = testing::RunQOp("QAdd", in, U8(1.0f, 3), {{"activation", std::string("Relu")}}, ctx).value();
  CHECK(Codes(relu) == std::vector<int32_t>{7, 3, 5, 3, 3});
  // QMul: 2 * 2 = 4, 0.5 * 0 = 0, 1.5 * 0 = 0, -1 * 1 = -1 -> y zp 10 gives 9, -2 * 0 = 0.
  const Tensor mul = testing::RunQOp("QMul", in, U8(1.0f, 10), {}, ctx).value();
  CHECK(Codes(mul) == std::vector<int32_t>{14, 10, 10, 9, 10});
  const Tensor mul31 = testing::RunQOp("QMul", in, U8(1.0f, 10), {{"requantization", std::string("q31")}}, ctx).value();
  CHECK(Codes(mul31) == std::vector<int32_t>{14, 10, 10, 9, 10});
}

enum class Kind { kAdd, kMul };

// The expected output of one case from the reference.
Tensor Reference(Kind kind, bool q31, const Tensor& a, const QParams& qa, const Tensor& b, const QParams& qb,
                 const QParams& qy, bool relu, const Shape& out) {
  const reference::QOperand oa{qa.scale(), qa.zero_point()}, ob{qb.scale(), qb.zero_point()},
      oy{qy.scale(), qy.zero_point()};
  const int32_t lo = relu ? std::max(qy.zero_point(), qy.quant_min()) : qy.quant_min();
  const int32_t hi = qy.quant_max();
  Tensor y = testing::EmptyLike(qy.dtype(), out);
  auto run = [&](auto* type_tag) {
    using T = std::remove_pointer_t<decltype(type_tag)>;
    const T* pa = static_cast<const T*>(a.raw_data());
    const T* pb = static_cast<const T*>(b.raw_data());
    T* py = static_cast<T*>(y.raw_data());
    if (kind == Kind::kAdd && !q31) {
      const auto p = reference::MakeQAddFp32Params(oa, ob, oy, lo, hi).value();
      reference::BroadcastElementwise(a.shape(), pa, b.shape(), pb, out, py,
                                      [&](int32_t u, int32_t v) { return reference::QAddFp32Value(u, v, p); });
    } else if (kind == Kind::kAdd) {
      const auto p = reference::MakeQAddQ31Params(oa, ob, oy, lo, hi).value();
      reference::BroadcastElementwise(a.shape(), pa, b.shape(), pb, out, py,
                                      [&](int32_t u, int32_t v) { return reference::QAddQ31Value(u, v, p); });
    } else if (!q31) {
      const auto p = reference::MakeQMulFp32Params(oa, ob, oy, lo, hi).value();
      reference::BroadcastElementwise(a.shape(), pa, b.shape(), pb, out, py,
                                      [&](int32_t u, int32_t v) { return reference::QMulFp32Value(u, v, p); });
    } else {
      const auto p = reference::MakeQMulQ31Params(oa, ob, oy, lo, hi).value();
      reference::BroadcastElementwise(a.shape(), pa, b.shape(), pb, out, py,
                                      [&](int32_t u, int32_t v) { return reference::QMulQ31Value(u, v, p); });
    }
  };
  if (qy.dtype() == DType::kU8) {
    run(static_cast<uint8_t*>(nullptr));
  } else {
    run(static_cast<int8_t*>(nullptr));
  }
  return y;
}

// Index into a broadcast operand for output element i (for the float sanity check).
int64_t OperandIndex(const Shape& s, const Shape& out, int64_t i) {
  int64_t idx = 0, stride = 1;
  for (int d = out.rank() - 1; d >= 0; --d) {
    const int64_t k = i % out.dim(d);
    i /= out.dim(d);
    const int ds = d - (out.rank() - s.rank());
    if (ds < 0) continue;
    if (s.dim(ds) != 1) idx += k * stride;
    stride *= s.dim(ds);
  }
  return idx;
}

struct ShapePair {
  Shape a, b, out;
};

// Returns whether the reference outputs vary (the caller requires most cases to).
bool CheckCase(std::mt19937_64& rng, Kind kind, const ShapePair& shapes, DType dtype, bool q31, bool relu) {
  const char* op = kind == Kind::kAdd ? "QAdd" : "QMul";
  const QParams qa = testing::RandomActivationQParams(rng, dtype);
  const QParams qb = testing::RandomActivationQParams(rng, dtype);
  // y's qparams cover most of the result's real range (a little saturates), so the outputs vary.
  auto real_range = [](const QParams& q) {
    return std::pair<float, float>{static_cast<float>(q.quant_min() - q.zero_point()) * q.scale(),
                                   static_cast<float>(q.quant_max() - q.zero_point()) * q.scale()};
  };
  const auto [a_lo, a_hi] = real_range(qa);
  const auto [b_lo, b_hi] = real_range(qb);
  float r_lo = a_lo + b_lo, r_hi = a_hi + b_hi;
  if (kind == Kind::kMul) {
    const float c[] = {a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi};
    r_lo = *std::min_element(c, c + 4);
    r_hi = *std::max_element(c, c + 4);
    // Products of uniform codes crowd near 0: a narrower output range keeps them apart.
    r_lo *= 0.25f;
    r_hi *= 0.25f;
  }
  const float y_scale = (r_hi - r_lo) / 255.0f * std::uniform_real_distribution<float>(0.8f, 1.0f)(rng);
  const int32_t q_lo = dtype == DType::kU8 ? 0 : -128;
  const float center = (r_lo + r_hi) / 2.0f;
  const int32_t y_zp =
      std::clamp(q_lo + static_cast<int32_t>(std::lround(127.5f - center / y_scale)), q_lo, q_lo + 255);
  const QParams qy = QParams::PerTensor(dtype, y_scale, y_zp).value();
  const Tensor a = testing::RandomCodes(rng, dtype, shapes.a);
  const Tensor b = testing::RandomCodes(rng, dtype, shapes.b);
  const Tensor want = Reference(kind, q31, a, qa, b, qb, qy, relu, shapes.out);
  INFO(op << " " << shapes.a.ToString() << " and " << shapes.b.ToString() << " " << DTypeName(dtype)
          << (q31 ? " q31" : " fp32") << (relu ? " Relu" : "") << ", A " << qa.ToString() << ", B "
          << qb.ToString() << ", Y " << qy.ToString());
  const bool varied = testing::VariedCodes(want);
  AttributeMap attrs;
  if (q31) attrs.Set("requantization", std::string("q31"));
  if (relu) attrs.Set("activation", std::string("Relu"));
  const bool same_shape = shapes.a == shapes.b;
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("QAdd on ") + IsaName(isa))) continue;
    for (int threads : {1, 2}) {
      INFO("isa " << IsaName(isa) << ", threads " << threads);
      const Context ctx = testing::ContextFor(isa, threads);
      const Tensor got = testing::RunQOp(op, {{a, qa}, {b, qb}}, qy, attrs, ctx).value();
      testing::RequireSameCodes(got, want);
      if (kind == Kind::kAdd && !q31 && same_shape) {
        bool has = false;
        for (const auto& e : QVAddUkernels<uint8_t>()) has = has || e.isa == isa;
        CHECK_THAT(ctx.LastKernel("QAdd"), Catch::EndsWith(std::string("__") + IsaName(has ? isa : Isa::kScalar)));
      }
      // A single-element operand on a large output runs through the 256-entry table and the ISA's lut kernel.
      if ((shapes.a.NumElements() == 1 || shapes.b.NumElements() == 1) && shapes.out.NumElements() >= 1024) {
        bool has = false;
        for (const auto& e : LutUkernels()) has = has || e.isa == isa;
        INFO("kernel " << ctx.LastKernel(op));
        CHECK_THAT(ctx.LastKernel(op),
                   Catch::Contains("_table/lut_u8_ukernel__" + std::string(IsaName(has ? isa : Isa::kScalar))));
      }
    }
  }
  // Float sanity: within 1 LSB of the float operation on the dequantized inputs, where that is inside y's range.
  const float y_lo = static_cast<float>((relu ? std::max(qy.zero_point(), qy.quant_min()) : qy.quant_min()) -
                                        qy.zero_point()) * qy.scale();
  const float y_hi = static_cast<float>(qy.quant_max() - qy.zero_point()) * qy.scale();
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const float va = testing::Dequantized(a, qa, OperandIndex(shapes.a, shapes.out, i));
    const float vb = testing::Dequantized(b, qb, OperandIndex(shapes.b, shapes.out, i));
    const float f = kind == Kind::kAdd ? va + vb : va * vb;
    if (f < y_lo || f > y_hi) continue;
    const float got = testing::Dequantized(want, qy, i);
    if (std::fabs(got - f) > qy.scale() * 1.001f) {
      FAIL("element " << i << ": float " << f << ", int8 " << got << " (more than 1 LSB = " << qy.scale() << ")");
    }
  }
  return varied;
}

ShapePair RandomBroadcastPair(std::mt19937_64& rng) {
  const int rank = static_cast<int>(rng() % 5);
  std::vector<int64_t> out(static_cast<size_t>(rank));
  for (auto& d : out) d = 1 + static_cast<int64_t>(rng() % 7);
  auto operand = [&]() {
    std::vector<int64_t> dims = out;
    for (auto& d : dims) {
      if (rng() % 3 == 0) d = 1;
    }
    const size_t drop = rank > 0 ? rng() % static_cast<size_t>(rank + 1) : 0;
    dims.erase(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(rng() % 2 ? drop : 0));
    return Shape(dims);
  };
  ShapePair p{operand(), operand(), Shape{}};
  // The broadcast of the two (dims where both are 1 stay 1).
  const int r = std::max(p.a.rank(), p.b.rank());
  std::vector<int64_t> o(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) {
    const int ia = i - (r - p.a.rank()), ib = i - (r - p.b.rank());
    const int64_t da = ia >= 0 ? p.a.dim(ia) : 1, db = ib >= 0 ? p.b.dim(ib) : 1;
    o[static_cast<size_t>(i)] = std::max(da, db);
  }
  p.out = Shape(o);
  return p;
}

TEST_CASE("QAdd and QMul equal the reference with broadcasting, every scheme, ISA and thread count", "[int8_misc]") {
  auto rng = testing::MakeRng("qadd_op");
  const std::vector<ShapePair> curated = {
      {Shape{2, 3, 5, 7}, Shape{2, 3, 5, 7}, Shape{2, 3, 5, 7}},
      // ResNet-like residual add, long enough to be cut into several parallel chunks.
      {Shape{1, 9, 48, 48}, Shape{1, 9, 48, 48}, Shape{1, 9, 48, 48}},
      {Shape{1, 37}, Shape{1, 37}, Shape{1, 37}},
      {Shape{2, 3, 4, 5}, Shape{3, 1, 1}, Shape{2, 3, 4, 5}},
      {Shape{5}, Shape{2, 3, 5}, Shape{2, 3, 5}},
      {Shape{}, Shape{3, 4}, Shape{3, 4}},
      {Shape{4, 1}, Shape{1, 7}, Shape{4, 7}},
      {Shape{2, 1, 5}, Shape{2, 3, 1}, Shape{2, 3, 5}},
      {Shape{3, 1, 33}, Shape{3, 5, 33}, Shape{3, 5, 33}},
      {Shape{0, 3}, Shape{3}, Shape{0, 3}},
      // A single-element operand on a large output: the 256-entry table path (attention's scale), either side.
      {Shape{4, 600}, Shape{}, Shape{4, 600}},
      {Shape{1}, Shape{3, 700}, Shape{3, 700}},
      {Shape{2, 8, 1100}, Shape{1, 1, 1}, Shape{2, 8, 1100}},
  };
  int cases = 0, varied = 0;
  for (Kind kind : {Kind::kAdd, Kind::kMul}) {
    for (const ShapePair& s : curated) {
      for (DType dtype : {DType::kU8, DType::kS8}) {
        varied += CheckCase(rng, kind, s, dtype, rng() % 2 == 0, rng() % 3 == 0);
        ++cases;
      }
    }
    for (int iter = 0; iter < 12; ++iter) {
      varied += CheckCase(rng, kind, RandomBroadcastPair(rng), rng() % 2 ? DType::kU8 : DType::kS8, rng() % 2 == 0,
                          rng() % 3 == 0);
      ++cases;
    }
  }
  // Guard against a vacuous comparison: most cases' outputs are not mostly one (saturated) code.
  INFO(varied << " of " << cases << " cases have varied outputs");
  CHECK(varied * 4 >= cases * 3);
}

template <typename T>
void CheckQVAddKernels(std::mt19937_64& rng, DType dtype) {
  for (const auto& uk : QVAddUkernels<T>()) {
    if (!testing::CanRun(uk.isa, uk.name)) continue;
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{15}, size_t{16}, size_t{17}, size_t{33},
                     size_t{64}, size_t{1000}, size_t{3001}}) {
      const QParams qa = testing::RandomActivationQParams(rng, dtype);
      const QParams qb = testing::RandomActivationQParams(rng, dtype);
      const QParams qy = testing::RandomActivationQParams(rng, dtype);
      const int32_t lo = qy.quant_min() + static_cast<int32_t>(rng() % 20);
      const QVAddParams p = reference::MakeQAddFp32Params({qa.scale(), qa.zero_point()},
                                                          {qb.scale(), qb.zero_point()},
                                                          {qy.scale(), qy.zero_point()}, lo, qy.quant_max())
                                .value();
      std::vector<T> a(n), b(n), y(n), want(n);
      for (size_t i = 0; i < n; ++i) {
        a[i] = static_cast<T>(rng());
        b[i] = static_cast<T>(rng());
        want[i] = static_cast<T>(reference::QAddFp32Value(a[i], b[i], p));
      }
      INFO(uk.name << " n " << n);
      uk.fn(n, a.data(), b.data(), y.data(), p);
      for (size_t i = 0; i < n; ++i) {
        if (y[i] != want[i]) FAIL("element " << i << ": got " << int{y[i]} << ", want " << int{want[i]});
      }
      // In place: y aliasing a.
      std::vector<T> in_place = a;
      uk.fn(n, in_place.data(), b.data(), in_place.data(), p);
      CHECK(in_place == want);
    }
  }
}

TEST_CASE("qvadd kernels equal the reference at every length, in place too", "[int8_misc]") {
  auto rng = testing::MakeRng("qvadd_kernels");
  CheckQVAddKernels<uint8_t>(rng, DType::kU8);
  CheckQVAddKernels<int8_t>(rng, DType::kS8);
}

TEST_CASE("QAdd and QMul: errors name the value and the problem", "[int8_misc]") {
  const Context ctx = Context::ForIsas(DetectedIsas(), 1);
  const Tensor a = QAddU8Tensor(Shape{2}, {1, 2});
  const QParams q = U8(0.1f, 3);
  auto error = [&](const std::string& op, const std::vector<QInput>& in, const std::optional<QParams>& qy,
                   AttributeMap attrs = {}) {
    auto r = testing::RunQOp(op, in, qy, std::move(attrs), ctx);
    REQUIRE_FALSE(r.ok());
    return r.status().ToString();
  };
  using Catch::Contains;
  CHECK_THAT(error("QAdd", {{a, q}, {a, std::nullopt}}, q),
             Contains("failed to compile node 'node' (QAdd)") && Contains("input 1 (B) 'in1' has no qparams"));
  CHECK_THAT(error("QMul", {{a, q}, {a, q}}, std::nullopt), Contains("output 0 (C) 'out' has no qparams"));
  const QParams per_channel = QParams::PerChannel(DType::kU8, {0.1f, 0.2f}, {0, 0}, 0, 0, 255).value();
  CHECK_THAT(error("QAdd", {{a, per_channel}, {a, q}}, q), Contains("input 0 (A) 'in0' must have per-tensor qparams"));
  const Tensor s8 = Tensor::FromValues<int8_t>(Shape{2}, std::vector<int8_t>{1, 2}).value();
  const QParams qs8 = QParams::PerTensor(DType::kS8, 0.1f, 0).value();
  CHECK_THAT(error("QAdd", {{a, q}, {s8, qs8}}, q), Contains("one dtype"));
  CHECK_THAT(error("QAdd", {{a, q}, {a, q}}, q, {{"activation", std::string("Relu6")}}),
             Contains("activation must be") && Contains("Relu6"));
  CHECK_THAT(error("QAdd", {{a, q}, {a, q}}, q, {{"requantization", std::string("fbgemm")}}),
             Contains("not \"fbgemm\""));
  CHECK_THAT(error("QMul", {{a, q}, {a, q}}, q, {{"requantization", std::string("q15")}}),
             Contains("requantization must be"));
  CHECK_THAT(error("QAdd", {{a, q}, {a, q}}, U8(1e-8f, 0), {{"requantization", std::string("q31")}}),
             Contains("q31 QAdd needs"));
  CHECK_THAT(error("QAdd", {{a, U8(1e30f, 0)}, {a, q}}, U8(1e-30f, 0)), Contains("too far apart"));
  const Tensor c = QAddU8Tensor(Shape{3}, {1, 2, 3});
  CHECK_THAT(error("QAdd", {{a, q}, {c, q}}, q), Contains("cannot be broadcast"));
  const Tensor f = Tensor::FromValues<float>(Shape{2}, std::vector<float>{1, 2}).value();
  CHECK_THAT(error("QMul", {{f, std::nullopt}, {a, q}}, q), Contains("input 0 (A) 'in0' must be u8 or s8, got f32"));
}

}  // namespace
}  // namespace octet
