// Every compiled fake-quantize kernel equals the scalar reference bit for bit, outputs and masks.
#include <catch2/catch.hpp>

#include <cstring>

#include "ops/reference/quantize_reference.h"
#include "ops/ukernels/fake_quantize.h"
#include "tests/ops/ukernels/elementwise_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

void CheckFakeQuantizeKernel(const UkernelEntry<FakeQuantizeUkernelFn>& kernel, size_t n, std::mt19937_64& rng,
                             bool with_mask) {
  int32_t qmin, qmax;
  const bool wide = rng() % 4 == 0;  // 16-bit style ranges too
  testing::RandomQuantRange(rng, wide ? -32768 : -128, wide ? 32767 : 255, &qmin, &qmax);
  if (!wide && qmax > 127 && qmin < 0) qmax = 127;
  const int32_t zp = testing::RandomZeroPoint(rng, qmin, qmax);
  const float scale = testing::RandomScale(rng);
  const FakeQuantizeParams p{scale, 1.0f / scale, zp, qmin, qmax};
  const std::vector<float> x = testing::AwkwardFloats(rng, n, scale, qmin, qmax, /*with_non_finite=*/true);
  std::vector<float> want(n + 1, 9.0f), got(n + 1, 9.0f);
  std::vector<uint8_t> want_mask(n + 1, 7), got_mask(n + 1, 7);
  const size_t want_nans =
      reference::FakeQuantizeF32(n, x.data(), want.data(), want_mask.data(), p.scale, p.inv_scale, zp, qmin, qmax);
  const size_t nans = kernel.fn(n, x.data(), got.data(), with_mask ? got_mask.data() : nullptr, p);
  INFO(kernel.name << " n=" << n << " scale=" << scale << " zp=" << zp << " range=[" << qmin << "," << qmax << "]");
  CHECK(nans == want_nans);
  for (size_t i = 0; i <= n; ++i) {
    if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0 || (with_mask && want_mask[i] != got_mask[i])) {
      FAIL_CHECK("index " << i << " x=" << (i < n ? x[i] : 0.0f) << " want " << want[i] << "/" << int{want_mask[i]}
                          << " got " << got[i] << "/" << int{got_mask[i]});
      return;
    }
  }
  if (!with_mask) CHECK(got_mask == std::vector<uint8_t>(n + 1, 7));
}

TEST_CASE("fake-quantize kernels equal the reference", "[fake_quantize]") {
  auto rng = testing::MakeRng("fake_quantize");
  for (const auto& kernel : FakeQuantizeUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (size_t n = 0; n <= 70; ++n) {
      CheckFakeQuantizeKernel(kernel, n, rng, true);
      CheckFakeQuantizeKernel(kernel, n, rng, false);
    }
    for (int trial = 0; trial < 200; ++trial) CheckFakeQuantizeKernel(kernel, testing::RandomSize(rng, 20000), rng, true);
  }
}

TEST_CASE("fake-quantize reference: PyTorch's straight-through mask", "[fake_quantize]") {
  // numerics.md §2.1 item 6: s = 0.05 over [-128, 127] passes the gradient for x/s in [qmin - 0.5, qmax + 0.5]
  // after rounding: [-10, -0.5, 0, 0.3, 6.35, 6.4, 10] -> [0, 1, 1, 1, 1, 0, 0].
  const float x[] = {-10.0f, -0.5f, 0.0f, 0.3f, 6.35f, 6.4f, 10.0f};
  const uint8_t want[] = {0, 1, 1, 1, 1, 0, 0};
  for (int i = 0; i < 7; ++i) {
    uint8_t mask = 9;
    const float y = reference::FakeQuantizeValue(x[i], 0.05f, 1.0f / 0.05f, 0, -128, 127, &mask);
    CHECK(mask == want[i]);
    CHECK(std::fabs(y) <= 6.4f);
  }
  uint8_t mask = 9;
  CHECK(reference::FakeQuantizeValue(NAN, 0.1f, 10.0f, 3, 0, 255, &mask) == 0.0f);
  CHECK(mask == 0);
  CHECK(reference::FakeQuantizeValue(INFINITY, 0.5f, 2.0f, 3, 0, 255, &mask) == (255 - 3) * 0.5f);
  CHECK(mask == 0);
}

}  // namespace
}  // namespace octet
