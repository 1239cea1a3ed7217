// The float softmax-row kernel family, kernel by kernel (every ISA this machine runs; others reported as skipped),
// against a double-precision softmax on lengths around the vector widths, wide value ranges, masked (-inf) scores
// and NaN; and the Softmax operator's innermost-axis path against the same reference.
#include "ops/float/ukernels/softmax_row.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

std::vector<double> ReferenceSoftmax(const float* x, int64_t n) {
  double m = -INFINITY;
  for (int64_t k = 0; k < n; ++k) m = std::max(m, double{x[k]});
  std::vector<double> y(static_cast<size_t>(n));
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += (y[static_cast<size_t>(k)] = std::exp(double{x[k]} - m));
  for (double& v : y) v /= sum;
  return y;
}

TEST_CASE("Every softmax-row kernel matches a double-precision softmax", "[float_ops]") {
  auto rng = testing::MakeRng("softmax-row-kernels");
  for (const auto& kernel : float_ops::SoftmaxRowUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 128, 1000}) {
      const float range = n % 2 == 0 ? 4.0f : 40.0f;
      std::uniform_real_distribution<float> uniform(-range, range);
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = uniform(rng);
      if (n >= 16) {  // masked scores, as a causal attention mask writes them
        for (int64_t k = n / 2; k < n; k += 3) x[static_cast<size_t>(k)] = -testing::kInf;
      }
      std::vector<float> y(x.size() + 16, -7.0f);
      kernel.fn(x.data(), y.data(), n);
      const std::vector<double> want = ReferenceSoftmax(x.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double w = want[static_cast<size_t>(i)];
        INFO(kernel.name << " n=" << n << " x=" << x[static_cast<size_t>(i)]);
        CHECK(std::fabs(y[static_cast<size_t>(i)] - w) <= 1e-9 + 1e-5 * w);
      }
      for (size_t i = static_cast<size_t>(n); i < y.size(); ++i) REQUIRE(y[i] == -7.0f);
    }
    // A NaN score makes the whole row NaN, as the scalar loop does.
    std::vector<float> x(19, 1.0f), y(19);
    x[17] = std::nanf("");
    kernel.fn(x.data(), y.data(), 19);
    for (float v : y) CHECK(std::isnan(v));
  }
}

TEST_CASE("Softmax along the innermost axis uses the softmax-row kernel and matches the reference", "[float_ops]") {
  auto rng = testing::MakeRng("softmax-rows");
  Tensor x = testing::RandomTensor(rng, Shape{2, 3, 37});
  for (int threads : {1, 3}) {
    auto y = testing::RunFloatOp("Softmax", {testing::In(x)}, {{"axis", int64_t{-1}}}, 1, threads);
    REQUIRE(y.ok());
    const float* got = (*y)[0].data<float>();
    for (int64_t r = 0; r < 6; ++r) {
      const std::vector<double> want = ReferenceSoftmax(x.data<float>() + r * 37, 37);
      for (int64_t k = 0; k < 37; ++k) {
        CHECK(std::fabs(got[r * 37 + k] - want[static_cast<size_t>(k)]) <= 1e-9 + 1e-5 * want[static_cast<size_t>(k)]);
      }
    }
  }
}

}  // namespace
}  // namespace octet
