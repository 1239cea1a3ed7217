// Every compiled QSoftmax u8 -> u8 row kernel equals reference::QSoftmaxRow bit for bit: random scales and zero
// points, rows of every length up to 300 and some long ones, random, clustered and constant rows (constant rows and
// power-of-two lengths put quotients on exact half-integers, the AVX2 kernel's exact-division path), and never
// writes past the row.
#include "ops/ukernels/qsoftmax.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/test_util.h"

namespace octet {
namespace {

std::vector<uint8_t> RandomRow(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> x(n);
  const int kind = static_cast<int>(rng() % 4);
  const int center = static_cast<int>(rng() % 256), spread = 1 + static_cast<int>(rng() % 40);
  for (auto& v : x) {
    if (kind == 0) v = static_cast<uint8_t>(rng());
    if (kind == 1)
      v = static_cast<uint8_t>(std::clamp(center + static_cast<int>(rng() % (2 * spread)) - spread, 0, 255));
    if (kind == 2) v = static_cast<uint8_t>(center);
    if (kind == 3) v = rng() % 8 == 0 ? 255 : static_cast<uint8_t>(rng() % 64);  // a few peaks
  }
  return x;
}

// A row of n equal codes at output scale 1/256 gives t = 256 / n + 1/2: an integer for n = 512 (the exact path).
TEST_CASE("qsoftmax u8 kernels equal QSoftmaxRow where the quotient is an exact integer", "[int8_misc]") {
  for (const auto& kernel : QSoftmaxU8Ukernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (size_t n : {size_t{64}, size_t{256}, size_t{512}, size_t{520}}) {
      for (float y_scale : {1.0f / 256.0f, std::exp2(-16.0f)}) {
        const reference::QSoftmaxParams p = reference::MakeQSoftmaxParams(0.1f, y_scale, 0, 0, 255).value();
        const std::vector<uint8_t> x(n, 77);
        std::vector<uint8_t> want(n), got(n);
        reference::QSoftmaxRow(p, static_cast<int64_t>(n), x.data(), want.data());
        kernel.fn(p, static_cast<int64_t>(n), x.data(), got.data());
        INFO(kernel.name << " n=" << n << " y_scale " << y_scale);
        CHECK(got == want);
      }
    }
  }
}

TEST_CASE("qsoftmax u8 kernels equal QSoftmaxRow on every length, scale and row shape", "[int8_misc]") {
  auto rng = testing::MakeRng("qsoftmax_kernels");
  for (const auto& kernel : QSoftmaxU8Ukernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    std::vector<size_t> lengths;
    for (size_t n = 1; n <= 300; ++n) lengths.push_back(n);
    for (size_t n : {size_t{512}, size_t{1024}, size_t{4096}, size_t{5001}}) lengths.push_back(n);
    for (size_t n : lengths) {
      const float x_scale = std::exp2(std::uniform_real_distribution<float>(-8.0f, 0.0f)(rng));
      const bool common = rng() % 2 == 0;  // the presets' y: scale 1/256 or 1/255, zero point 0
      // Every 7th row at the smallest output scale (2^-16, M = 2^32): the AVX2 kernel's double-precision path.
      const float y_scale = n % 7 == 0 ? std::exp2(-16.0f)
                            : common   ? (rng() % 2 ? 1.0f / 256.0f : 1.0f / 255.0f)
                                       : std::exp2(std::uniform_real_distribution<float>(-12.0f, -4.0f)(rng));
      const int32_t y_zp = common ? 0 : static_cast<int32_t>(rng() % 64);
      const reference::QSoftmaxParams p = reference::MakeQSoftmaxParams(x_scale, y_scale, y_zp, 0, 255).value();
      const std::vector<uint8_t> x = RandomRow(rng, n);
      std::vector<uint8_t> want(n + 16, 0xA5), got(n + 16, 0xA5);
      reference::QSoftmaxRow(p, static_cast<int64_t>(n), x.data(), want.data());
      kernel.fn(p, static_cast<int64_t>(n), x.data(), got.data());
      INFO(kernel.name << " n=" << n << " x_scale " << x_scale << " y_scale " << y_scale << " y_zp " << y_zp);
      for (size_t i = 0; i < want.size(); ++i) {
        if (want[i] != got[i]) {
          FAIL_CHECK("byte " << i << " want " << int{want[i]} << " got " << int{got[i]});
          break;
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet
