// The sgemm kernel family, kernel by kernel (every ISA this machine runs; others reported as skipped), against a
// double-precision reference: block shapes at and around the register tiles and the k slice, transposes, alpha,
// accumulate; and Sgemm's split over blocks and threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <memory>

#include "ops/float/sgemm.h"
#include "ops/float/ukernels/sgemm.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/ops/float/sgemm_workspace.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using float_ops::SgemmArgs;
using float_ops::SgemmBlockArgs;

struct Problem {
  int64_t m, n, k;
  bool ta, tb, accumulate;
  float alpha;
  std::vector<float> a, b, c0;
  int64_t lda, ldb, ldc;
};

Problem MakeProblem(std::mt19937_64& rng, int64_t m, int64_t n, int64_t k) {
  Problem p{m, n, k, rng() % 2 == 0, rng() % 2 == 0, rng() % 3 == 0, rng() % 2 ? 1.0f : -0.5f, {}, {}, {}, 0, 0, 0};
  // Row strides larger than the rows, so a kernel that ignores them fails.
  p.lda = (p.ta ? m : k) + static_cast<int64_t>(rng() % 3);
  p.ldb = (p.tb ? k : n) + static_cast<int64_t>(rng() % 3);
  p.ldc = n + static_cast<int64_t>(rng() % 3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  p.a.resize(static_cast<size_t>((p.ta ? k : m) * p.lda));
  p.b.resize(static_cast<size_t>((p.tb ? n : k) * p.ldb));
  p.c0.resize(static_cast<size_t>(m * p.ldc));
  for (float& v : p.a) v = u(rng);
  for (float& v : p.b) v = u(rng);
  for (float& v : p.c0) v = u(rng);
  return p;
}

// The Sgemm arguments of `p` writing into `c`: no prepacked operand, no bias.
SgemmArgs ArgsOf(const Problem& p, float* c) {
  SgemmArgs g;
  g.m = p.m, g.n = p.n, g.k = p.k, g.trans_a = p.ta, g.trans_b = p.tb;
  g.a = p.a.data(), g.lda = p.lda, g.b = p.b.data(), g.ldb = p.ldb, g.c = c, g.ldc = p.ldc;
  g.alpha = p.alpha, g.accumulate = p.accumulate;
  return g;
}

// Checks c against the double reference; the tolerance grows like sqrt(k) (random-sign float sums).
void CheckResult(const Problem& p, const std::vector<float>& c, const char* kernel) {
  const double tol = 2e-6 * std::sqrt(static_cast<double>(p.k)) + 1e-6;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < p.k; ++q) {
        const double av = p.ta ? p.a[static_cast<size_t>(q * p.lda + i)] : p.a[static_cast<size_t>(i * p.lda + q)];
        const double bv = p.tb ? p.b[static_cast<size_t>(j * p.ldb + q)] : p.b[static_cast<size_t>(q * p.ldb + j)];
        acc += av * bv;
      }
      const double want = p.alpha * acc + (p.accumulate ? p.c0[static_cast<size_t>(i * p.ldc + j)] : 0.0);
      const double got = c[static_cast<size_t>(i * p.ldc + j)];
      if (std::fabs(got - want) > tol * (1.0 + std::fabs(want))) {
        FAIL(kernel << " m=" << p.m << " n=" << p.n << " k=" << p.k << " transA=" << p.ta << " transB=" << p.tb
                    << " acc=" << p.accumulate << ": C[" << i << "][" << j << "] = " << got << ", want " << want);
      }
    }
    // Padding between rows is never written.
    for (int64_t j = p.n; j < p.ldc; ++j) {
      REQUIRE(c[static_cast<size_t>(i * p.ldc + j)] == p.c0[static_cast<size_t>(i * p.ldc + j)]);
    }
  }
}

TEST_CASE("Every sgemm kernel matches the reference on block shapes around its tiles", "[float_ops]") {
  auto rng = testing::MakeRng("sgemm-kernels");
  const testing::SgemmWorkspace workspace = testing::MakeSgemmWorkspace();
  for (const auto& kernel : float_ops::SgemmUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},   {8, 32, 256}, {6, 16, 257}, {9, 33, 255},
                                                  {7, 15, 1},  {128, 256, 3}, {128, 256, 513}, {5, 250, 40},
                                                  {127, 1, 300}, {13, 17, 19}};
    for (int i = 0; i < 14; ++i) {
      shapes.push_back({static_cast<int64_t>(testing::RandomSize(rng, 128)),
                        static_cast<int64_t>(testing::RandomSize(rng, 256)),
                        static_cast<int64_t>(testing::RandomSize(rng, 700))});
    }
    for (const auto& [m, n, k] : shapes) {
      Problem p = MakeProblem(rng, m, n, k);
      std::vector<float> c = p.c0;
      SgemmBlockArgs b;
      b.m = m, b.n = n, b.k = k, b.trans_a = p.ta, b.trans_b = p.tb;
      b.a = p.a.data(), b.lda = p.lda, b.b = p.b.data(), b.ldb = p.ldb, b.c = c.data(), b.ldc = p.ldc;
      b.alpha = p.alpha, b.accumulate = p.accumulate, b.workspace = workspace.get();
      kernel.fn(b);
      CheckResult(p, c, kernel.name);
    }
  }
}

TEST_CASE("Every sgemm kernel's bias equals the product followed by a bias pass, bit for bit", "[float_ops]") {
  auto rng = testing::MakeRng("sgemm-bias");
  const testing::SgemmWorkspace workspace = testing::MakeSgemmWorkspace();
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const auto& kernel : float_ops::SgemmUkernels()) {
    if (!testing::CanRun(kernel.isa, std::string(kernel.name) + " bias")) continue;
    // Full and edge tiles (rows and columns past the register tile, partial vectors), 1-2 row blocks (the
    // row-panel path), several k slices (the bias only after the last), accumulate or not.
    std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},   {2, 49, 300},  {8, 32, 256},  {6, 16, 513},
                                                  {9, 49, 40}, {13, 17, 257}, {128, 256, 5}, {7, 200, 3}};
    for (int i = 0; i < 8; ++i) {
      shapes.push_back({static_cast<int64_t>(testing::RandomSize(rng, 128)),
                        static_cast<int64_t>(testing::RandomSize(rng, 256)),
                        static_cast<int64_t>(testing::RandomSize(rng, 600))});
    }
    for (const auto& [m, n, k] : shapes) {
      Problem p = MakeProblem(rng, m, n, k);
      std::vector<float> bias(static_cast<size_t>(m));
      for (float& v : bias) v = u(rng);
      std::vector<float> fused = p.c0, separate = p.c0;
      SgemmBlockArgs b;
      b.m = m, b.n = n, b.k = k, b.trans_a = p.ta, b.trans_b = p.tb;
      b.a = p.a.data(), b.lda = p.lda, b.b = p.b.data(), b.ldb = p.ldb, b.ldc = p.ldc;
      b.alpha = p.alpha, b.accumulate = p.accumulate, b.workspace = workspace.get();
      b.c = separate.data();
      kernel.fn(b);
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t j = 0; j < n; ++j) separate[static_cast<size_t>(r * p.ldc + j)] += bias[static_cast<size_t>(r)];
      }
      b.c = fused.data();
      b.bias = bias.data();
      kernel.fn(b);
      INFO(kernel.name << " m=" << m << " n=" << n << " k=" << k << " acc=" << p.accumulate);
      REQUIRE(fused == separate);
    }
  }
  // Through Sgemm's tiles and threads, prepacked A, and with k = 0 (C = bias, or C + bias).
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("Sgemm bias ") + IsaName(isa))) continue;
    const auto& kernel = float_ops::SelectSgemm(testing::ContextFor(isa, 1));
    for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{{300, 49, 700}, {64, 3136, 27}, {5, 9, 0}}) {
      Problem p = MakeProblem(rng, m, n, k);
      std::vector<float> bias(static_cast<size_t>(m));
      for (float& v : bias) v = u(rng);
      const std::vector<float> packed = float_ops::PackSgemmA(kernel.fn, m, k, p.ta, p.a.data(), p.lda);
      for (int threads : {1, 3}) {
        const Context context = testing::ContextFor(isa, threads);
        std::vector<float> fused = p.c0, separate = p.c0;
        SgemmArgs g = ArgsOf(p, separate.data());
        float_ops::Sgemm(context, kernel.fn, g);
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t j = 0; j < n; ++j) {
            separate[static_cast<size_t>(r * p.ldc + j)] += bias[static_cast<size_t>(r)];
          }
        }
        if (!packed.empty()) g.packed_a = packed.data();
        g.c = fused.data();
        g.bias = bias.data();
        float_ops::Sgemm(context, kernel.fn, g);
        INFO(kernel.name << " m=" << m << " n=" << n << " k=" << k << " threads=" << threads);
        REQUIRE(fused == separate);
      }
    }
  }
}

TEST_CASE("Sgemm splits large products into blocks identically at any thread count", "[float_ops]") {
  auto rng = testing::MakeRng("sgemm-split");
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("sgemm ") + IsaName(isa))) continue;
    const Context one = testing::ContextFor(isa, 1);
    const Context three = testing::ContextFor(isa, 3);
    const auto& kernel = float_ops::SelectSgemm(one);
    for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{{300, 600, 70}, {129, 257, 260}, {64, 3136, 27}}) {
      Problem p = MakeProblem(rng, m, n, k);
      std::vector<float> c1 = p.c0, c3 = p.c0;
      SgemmArgs g = ArgsOf(p, c1.data());
      float_ops::Sgemm(one, kernel.fn, g);
      g.c = c3.data();
      float_ops::Sgemm(three, kernel.fn, g);
      CheckResult(p, c1, kernel.name);
      CHECK(c1 == c3);
    }
  }
}

// Products whose tiling splits kSgemmMaxM blocks into row tiles (prepacked A read from a panel inside its block,
// k over several kSgemmKc slices with a short last one) and pixels into narrow column tiles: the result at 2, 3 and
// 7 threads equals the 1-thread one, with and without prepacked A.
TEST_CASE("Sgemm's 2-D tiles give identical results at 1, 2, 3 and 7 threads, prepacked A or not", "[float_ops]") {
  auto rng = testing::MakeRng("sgemm-tiles");
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("sgemm tiles ") + IsaName(isa))) continue;
    const Context one = testing::ContextFor(isa, 1);
    const auto& kernel = float_ops::SelectSgemm(one);
    for (const auto& [m, n, k] :
         std::vector<std::array<int64_t, 3>>{{300, 81, 1400}, {200, 49, 2304}, {37, 700, 300}}) {
      const float_ops::SgemmTiling tiling = float_ops::ChooseSgemmTiling(kernel.fn, m, n, k);
      INFO(kernel.name << " m=" << m << " n=" << n << " k=" << k << ": " << tiling.tiles_m << "x" << tiling.tiles_n
                       << " tiles");
      CHECK(tiling.count() > 1);
      Problem p = MakeProblem(rng, m, n, k);
      p.ta = false;
      p.lda = k + 1;
      p.a.resize(static_cast<size_t>(m * p.lda));
      for (bool prepack : {false, true}) {
        const std::vector<float> packed =
            prepack ? float_ops::PackSgemmA(kernel.fn, m, k, false, p.a.data(), p.lda) : std::vector<float>{};
        std::vector<float> first;
        for (int threads : {1, 2, 3, 7}) {
          std::vector<float> c = p.c0;
          SgemmArgs g = ArgsOf(p, c.data());  // p.ta is false
          g.packed_a = packed.empty() ? nullptr : packed.data();
          float_ops::Sgemm(testing::ContextFor(isa, threads), kernel.fn, g);
          if (threads == 1) {
            CheckResult(p, c, kernel.name);
            first = c;
          } else {
            INFO("prepacked " << prepack << ", " << threads << " threads");
            CHECK(c == first);
          }
        }
      }
    }
  }
}

// B prepacked once by PackSgemmB (constant weights: Gemm, MatMul, LSTM) gives the product of B packed per block,
// bit for bit, on shapes with one or two rows (the row-at-a-time path of matrix-vector products), a panel edge, a
// short last k slice and several column blocks, at 1 and 3 threads.
TEST_CASE("Sgemm with B prepacked by PackSgemmB equals the unpacked product", "[float_ops]") {
  auto rng = testing::MakeRng("sgemm-packed-b");
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("sgemm packed B ") + IsaName(isa))) continue;
    const auto& kernel = float_ops::SelectSgemm(testing::ContextFor(isa, 1));
    if (float_ops::SgemmPanelCols(kernel.fn) == 0) {
      CHECK(float_ops::PackSgemmB(kernel.fn, 5, 7, false, std::vector<float>(35).data(), 7).empty());
      continue;
    }
    for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {1, 2048, 512}, {2, 333, 300}, {3, 77, 257}, {1, 600, 700}, {35, 1000, 300}, {130, 40, 9}}) {
      Problem p = MakeProblem(rng, m, n, k);
      const std::vector<float> packed = float_ops::PackSgemmB(kernel.fn, k, n, p.tb, p.b.data(), p.ldb);
      for (int threads : {1, 3}) {
        const Context context = testing::ContextFor(isa, threads);
        std::vector<float> plain = p.c0, prepacked = p.c0;
        SgemmArgs g = ArgsOf(p, plain.data());
        float_ops::Sgemm(context, kernel.fn, g);
        g.packed_b = packed.data();
        g.c = prepacked.data();
        float_ops::Sgemm(context, kernel.fn, g);
        INFO(kernel.name << " m=" << m << " n=" << n << " k=" << k << " threads=" << threads);
        CheckResult(p, prepacked, kernel.name);
        CHECK(prepacked == plain);
      }
    }
  }
}

}  // namespace
}  // namespace octet
