// The float depthwise kernel family, kernel by kernel (every ISA this machine runs; others reported as skipped),
// against a double-precision reference on random awkward planes: widths around the vector widths, strides 1-3,
// dilations, asymmetric pads larger than the kernel, planes narrower than the window, kernels up to 7x7.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "ops/float/ukernels/dwconv.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using float_ops::DwconvPlaneArgs;

TEST_CASE("Every depthwise kernel matches the reference on random planes", "[float_ops]") {
  auto rng = testing::MakeRng("dwconv-kernels");
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const auto& kernel : float_ops::DwconvUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (int iter = 0; iter < 300; ++iter) {
      DwconvPlaneArgs g;
      g.h = 1 + static_cast<int64_t>(testing::RandomSize(rng, 40));
      g.w = 1 + static_cast<int64_t>(testing::RandomSize(rng, 70));
      g.kh = 1 + static_cast<int64_t>(rng() % 7);
      g.kw = 1 + static_cast<int64_t>(rng() % 7);
      g.sh = 1 + static_cast<int64_t>(rng() % 3);
      g.sw = iter % 3 == 0 ? 1 + static_cast<int64_t>(rng() % 3) : (iter % 3 == 1 ? 1 : 2);
      g.dh = 1 + static_cast<int64_t>(rng() % 2);
      g.dw = 1 + static_cast<int64_t>(rng() % 2);
      g.pad_top = static_cast<int64_t>(rng() % 4);
      g.pad_left = static_cast<int64_t>(rng() % 4);
      const int64_t pad_bottom = static_cast<int64_t>(rng() % 4), pad_right = static_cast<int64_t>(rng() % 4);
      const int64_t span_h = g.h + g.pad_top + pad_bottom - g.dh * (g.kh - 1);
      const int64_t span_w = g.w + g.pad_left + pad_right - g.dw * (g.kw - 1);
      if (span_h < 1 || span_w < 1) continue;
      g.oh = (span_h - 1) / g.sh + 1;
      g.ow = (span_w - 1) / g.sw + 1;
      // The plane sits inside a larger buffer with guard values: the kernel reads and writes only its own plane.
      std::vector<float> x(static_cast<size_t>(g.h * g.w)), w(static_cast<size_t>(g.kh * g.kw));
      for (float& v : x) v = uniform(rng);
      for (float& v : w) v = uniform(rng);
      g.bias = uniform(rng);
      constexpr float kGuard = 12345.0f;
      std::vector<float> y(static_cast<size_t>(g.oh * g.ow + 32), kGuard);
      g.x = x.data();
      g.weights = w.data();
      g.y = y.data() + 16;
      kernel.fn(g);
      INFO(kernel.name << " h=" << g.h << " w=" << g.w << " k=" << g.kh << "x" << g.kw << " s=" << g.sh << ","
                       << g.sw << " d=" << g.dh << "," << g.dw << " pads=" << g.pad_top << "," << g.pad_left << ","
                       << pad_bottom << "," << pad_right);
      for (int64_t i = 0; i < 16; ++i) {
        REQUIRE(y[static_cast<size_t>(i)] == kGuard);
        REQUIRE(y[static_cast<size_t>(16 + g.oh * g.ow + i)] == kGuard);
      }
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          double want = g.bias, magnitude = std::fabs(g.bias);
          for (int64_t i = 0; i < g.kh; ++i) {
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t ih = oh * g.sh - g.pad_top + i * g.dh, iw = ow * g.sw - g.pad_left + j * g.dw;
              if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
              const double term = double{w[static_cast<size_t>(i * g.kw + j)]} * x[static_cast<size_t>(ih * g.w + iw)];
              want += term;
              magnitude += std::fabs(term);
            }
          }
          // At most 50 float roundings, each within 2^-24 of the running magnitude.
          const double got = g.y[oh * g.ow + ow];
          if (std::fabs(got - want) > 4e-6 * magnitude + 1e-7) {
            FAIL("y[" << oh << "][" << ow << "] = " << got << ", want " << want);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet
