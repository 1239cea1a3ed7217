// The float LSTM cell kernel family, kernel by kernel (every ISA this machine runs; others reported as skipped),
// against a double-precision evaluation of ONNX's LSTM cell on hidden sizes around the vector widths, with
// pre-activations that reach the saturated ends of sigmoid and tanh.
#include "ops/float/ukernels/lstm_gates.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/test_util.h"

namespace octet {
namespace {

TEST_CASE("Every LSTM cell kernel matches the double-precision cell", "[float_ops]") {
  auto rng = testing::MakeRng("lstm-gates");
  for (const auto& kernel : float_ops::LstmGatesUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (int64_t hidden : {1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 512}) {
      const float range = hidden % 2 == 0 ? 4.0f : 40.0f;
      std::uniform_real_distribution<float> uniform(-range, range);
      std::vector<float> xw(static_cast<size_t>(4 * hidden)), rec(xw.size()), c(static_cast<size_t>(hidden));
      for (float& v : xw) v = uniform(rng);
      for (float& v : rec) v = uniform(rng);
      for (float& v : c) v = uniform(rng);
      // Guards past the state rows: the kernel writes exactly `hidden` floats of each.
      std::vector<float> c_run(c), h_run(static_cast<size_t>(hidden) + 8, -7.0f);
      c_run.resize(c.size() + 8, -7.0f);
      kernel.fn(xw.data(), rec.data(), c_run.data(), h_run.data(), hidden);
      auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
      for (int64_t k = 0; k < hidden; ++k) {
        auto pre = [&](int gate) {
          return double{xw[static_cast<size_t>(gate * hidden + k)]} + rec[static_cast<size_t>(gate * hidden + k)];
        };
        const double cn = sig(pre(2)) * c[static_cast<size_t>(k)] + sig(pre(0)) * std::tanh(pre(3));
        const double hn = sig(pre(1)) * std::tanh(cn);
        INFO(kernel.name << " hidden=" << hidden << " unit " << k);
        CHECK(std::fabs(c_run[static_cast<size_t>(k)] - cn) <= 1e-5 * (1.0 + std::fabs(cn)));
        CHECK(std::fabs(h_run[static_cast<size_t>(k)] - hn) <= 1e-5);
      }
      for (int64_t k = hidden; k < hidden + 8; ++k) {
        REQUIRE(c_run[static_cast<size_t>(k)] == -7.0f);
        REQUIRE(h_run[static_cast<size_t>(k)] == -7.0f);
      }
    }
  }
}

}  // namespace
}  // namespace octet
