// The float erf kernel family, kernel by kernel (every ISA this machine runs; others reported as skipped), against
// double-precision erf on lengths around the vector widths, values across erf's curve and its saturated tails, and
// the special values.
#include "ops/float/ukernels/erf.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/test_util.h"

namespace octet {
namespace {

TEST_CASE("Every erf kernel matches double-precision erf", "[float_ops]") {
  auto rng = testing::MakeRng("erf-kernels");
  for (const auto& kernel : float_ops::ErfUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 33, 1000}) {
      std::uniform_real_distribution<float> uniform(n % 2 == 0 ? -3.0f : -12.0f, n % 2 == 0 ? 3.0f : 12.0f);
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = uniform(rng);
      if (n == 1000) {
        const std::vector<float> special = {0.0f, -0.0f, 1e-30f, -1e-30f, 0.5f, -0.5f, 3.9f, -3.9f, 100.0f, -100.0f};
        std::copy(special.begin(), special.end(), x.begin());
        x[10] = testing::kInf;
        x[11] = -testing::kInf;
      }
      std::vector<float> y(x.size() + 8, -7.0f);
      kernel.fn(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double want = std::erf(double{x[static_cast<size_t>(i)]});
        INFO(kernel.name << " n=" << n << " x=" << x[static_cast<size_t>(i)]);
        CHECK(std::fabs(y[static_cast<size_t>(i)] - want) <= 2e-7 + 1e-6 * std::fabs(want));
      }
      for (size_t i = static_cast<size_t>(n); i < y.size(); ++i) REQUIRE(y[i] == -7.0f);
    }
  }
}

}  // namespace
}  // namespace octet
