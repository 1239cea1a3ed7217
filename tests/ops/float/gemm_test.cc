// Gemm and MatMul against plain loops: transposes, alpha/beta, C broadcasting, batched and 1-D MatMul, threads.
#include <catch2/catch.hpp>

#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::Const;
using testing::In;

TEST_CASE("Gemm matches the reference for every transpose, alpha, beta and C shape", "[float_ops]") {
  auto rng = testing::MakeRng("gemm");
  for (int iter = 0; iter < 40; ++iter) {
    const int64_t m = static_cast<int64_t>(testing::RandomSize(rng, 300));
    const int64_t n = static_cast<int64_t>(testing::RandomSize(rng, 300));
    const int64_t k = static_cast<int64_t>(testing::RandomSize(rng, 200));
    const int64_t ta = rng() % 2, tb = rng() % 2;
    const float alpha = iter % 3 == 0 ? 1.0f : 0.75f, beta = iter % 4 == 0 ? 0.0f : 1.5f;
    Tensor a = testing::RandomTensor(rng, ta ? Shape{k, m} : Shape{m, k});
    Tensor b = testing::RandomTensor(rng, tb ? Shape{n, k} : Shape{k, n});
    const int c_kind = static_cast<int>(rng() % 5);  // none, [n], [1, n], [m, 1], [m, n]
    const Shape c_shape = c_kind == 1 ? Shape{n} : c_kind == 2 ? Shape{1, n} : c_kind == 3 ? Shape{m, 1} : Shape{m, n};
    Tensor c = testing::RandomTensor(rng, c_shape);
    std::vector<float> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          const float av = ta ? a.data<float>()[p * m + i] : a.data<float>()[i * k + p];
          const float bv = tb ? b.data<float>()[j * k + p] : b.data<float>()[p * n + j];
          acc += double{av} * bv;
        }
        float cv = 0.0f;
        if (c_kind == 1 || c_kind == 2) cv = c.data<float>()[j];
        if (c_kind == 3) cv = c.data<float>()[i];
        if (c_kind == 4) cv = c.data<float>()[i * n + j];
        want[static_cast<size_t>(i * n + j)] = static_cast<float>(alpha * acc + (c_kind ? beta * cv : 0.0f));
      }
    std::vector<testing::OpInput> ins = {In(a), rng() % 2 ? Const(b) : In(b)};
    if (c_kind) ins.push_back(Const(c));
    AttributeMap attrs{{"transA", ta}, {"transB", tb}, {"alpha", alpha}, {"beta", beta}};
    INFO("m=" << m << " n=" << n << " k=" << k << " transA=" << ta << " transB=" << tb << " C kind " << c_kind);
    auto one = testing::RunFloatOp("Gemm", ins, attrs, 1, 1);
    REQUIRE(one.ok());
    testing::ExpectClose((*one)[0], want, 1e-4f, 1e-4f);
    auto three = testing::RunFloatOp("Gemm", ins, attrs, 1, 3);
    REQUIRE(three.ok());
    CHECK(testing::BitEqual((*one)[0], (*three)[0]));
  }
}

TEST_CASE("Gemm rejects mismatched shapes", "[float_ops]") {
  auto rng = testing::MakeRng("gemm-bad");
  auto r = testing::RunFloatOp("Gemm", {In(testing::RandomTensor(rng, Shape{2, 3})),
                                        In(testing::RandomTensor(rng, Shape{4, 5}))});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("inner dimensions differ"));
  auto c = testing::RunFloatOp("Gemm", {In(testing::RandomTensor(rng, Shape{2, 3})),
                                        In(testing::RandomTensor(rng, Shape{3, 5})),
                                        In(testing::RandomTensor(rng, Shape{3, 5}))});
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(), Catch::Contains("broadcast"));
  auto rank = testing::RunFloatOp("Gemm", {In(testing::RandomTensor(rng, Shape{2, 3, 1})),
                                           In(testing::RandomTensor(rng, Shape{3, 5}))});
  REQUIRE_FALSE(rank.ok());
}

TEST_CASE("MatMul broadcasts batch dims and promotes 1-D operands", "[float_ops]") {
  auto rng = testing::MakeRng("matmul");
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {Shape{3, 4}, Shape{4, 5}, Shape{3, 5}},
      {Shape{2, 3, 4}, Shape{4, 5}, Shape{2, 3, 5}},
      {Shape{2, 1, 3, 4}, Shape{3, 4, 6}, Shape{2, 3, 3, 6}},
      {Shape{4}, Shape{4, 5}, Shape{5}},
      {Shape{3, 4}, Shape{4}, Shape{3}},
      {Shape{4}, Shape{4}, Shape{}},
      {Shape{5, 1, 7, 33}, Shape{1, 3, 33, 9}, Shape{5, 3, 7, 9}},
      {Shape{130, 70}, Shape{70, 300}, Shape{130, 300}},
      {Shape{35, 1, 64}, Shape{64, 333}, Shape{35, 1, 333}},
      {Shape{1, 2, 300}, Shape{300, 70}, Shape{1, 2, 70}},
  };
  for (size_t ci = 0; ci < 2 * cases.size(); ++ci) {
    const Case& c = cases[ci / 2];
    // Odd cases: B constant, packed once at Prepare.
    const bool constant_b = ci % 2 == 1;
    Tensor a = testing::RandomTensor(rng, c.a);
    Tensor b = testing::RandomTensor(rng, c.b);
    auto y = testing::RunFloatOp("MatMul", {In(a), constant_b ? Const(b) : In(b)}, {}, 1, 2);
    INFO(c.a.ToString() << " x " << c.b.ToString() << (constant_b ? " (constant B)" : ""));
    REQUIRE(y.ok());
    REQUIRE((*y)[0].shape() == c.out);
    // Reference: promote, broadcast with explicit index arithmetic.
    Shape pa = c.a.rank() == 1 ? Shape{1, c.a.dim(0)} : c.a;
    Shape pb = c.b.rank() == 1 ? Shape{c.b.dim(0), 1} : c.b;
    const int64_t m = pa.dim(pa.rank() - 2), k = pa.dim(pa.rank() - 1), n = pb.dim(pb.rank() - 1);
    const int batch_rank = std::max(pa.rank(), pb.rank()) - 2;
    std::vector<int64_t> batch(static_cast<size_t>(batch_rank));
    auto bdim = [&](const Shape& s, int i) {
      const int off = i - (batch_rank - (s.rank() - 2));
      return off >= 0 ? s.dim(off) : int64_t{1};
    };
    int64_t batches = 1;
    for (int i = 0; i < batch_rank; ++i) batches *= (batch[static_cast<size_t>(i)] = std::max(bdim(pa, i), bdim(pb, i)));
    std::vector<float> want;
    for (int64_t t = 0; t < batches; ++t) {
      int64_t rem = t, oa = 0, ob = 0, sa = 1, sb = 1;
      for (int i = batch_rank - 1; i >= 0; --i) {
        const int64_t idx = rem % batch[static_cast<size_t>(i)];
        rem /= batch[static_cast<size_t>(i)];
        oa += (bdim(pa, i) == 1 ? 0 : idx) * sa;
        ob += (bdim(pb, i) == 1 ? 0 : idx) * sb;
        sa *= bdim(pa, i);
        sb *= bdim(pb, i);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0.0;
          for (int64_t p = 0; p < k; ++p) {
            acc += double{a.data<float>()[oa * m * k + i * k + p]} * b.data<float>()[ob * k * n + p * n + j];
          }
          want.push_back(static_cast<float>(acc));
        }
    }
    testing::ExpectClose((*y)[0], want, 1e-4f, 1e-4f);
  }
  auto bad = testing::RunFloatOp("MatMul", {In(testing::RandomTensor(rng, Shape{2, 3, 4})),
                                            In(testing::RandomTensor(rng, Shape{3, 4, 5}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("cannot be broadcast"));
}

}  // namespace
}  // namespace octet
