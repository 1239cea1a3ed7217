// The NEON fixed-point primitives (ops/ukernels/fixedpoint/neon.h) equal the scalar reference
// (ops/reference/fixed_point.h) bit for bit: every exponent and left shift, the rounding ties of each, the int32
// extremes and random operands. NEON is the aarch64 baseline, so the header is tested directly here; the x86
// headers need their ISA's flags and are tested through the kernels that include them (requantize_test.cc,
// qgemm_test.cc, qdwconv_test.cc). Needs only headers and Catch2, so it also builds alone for a quick qemu check.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ops/reference/fixed_point.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include "ops/ukernels/fixedpoint/neon.h"

namespace octet {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

// Values around every multiple of 2^e and every tie k * 2^e + 2^(e-1), both signs, plus the extremes.
std::vector<int32_t> EdgeValues(std::mt19937_64& rng) {
  std::vector<int32_t> v = {0, 1, -1, 2, -2, kMin, kMin + 1, kMax, kMax - 1};
  for (int e = 0; e < 32; ++e) {
    const int64_t p = int64_t{1} << e;
    for (int64_t base : {p, p / 2, p + p / 2, 3 * p, 3 * p + p / 2}) {
      for (int64_t d = -2; d <= 2; ++d) {
        for (int64_t sign : {1, -1}) {
          const int64_t x = sign * base + d;
          if (x >= kMin && x <= kMax) v.push_back(static_cast<int32_t>(x));
        }
      }
    }
  }
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<int32_t>(rng()));
  return v;
}

// Runs a 4-lane function over xs with per-lane second operands ys (same length, a multiple of 4 after padding).
template <typename F>
std::vector<int32_t> Lanes(const std::vector<int32_t>& xs, const std::vector<int32_t>& ys, F f) {
  std::vector<int32_t> out(xs.size());
  for (size_t i = 0; i < xs.size(); i += 4) {
    int32_t x[4] = {}, y[4] = {}, r[4];
    for (size_t l = 0; l < 4 && i + l < xs.size(); ++l) {
      x[l] = xs[i + l];
      y[l] = ys[i + l];
    }
    vst1q_s32(r, f(vld1q_s32(x), vld1q_s32(y)));
    for (size_t l = 0; l < 4 && i + l < xs.size(); ++l) out[i + l] = r[l];
  }
  return out;
}

// The index of the first got[i] != want(xs[i]), reported with both values; xs.size() when none.
template <typename F>
size_t FirstMismatch(const std::vector<int32_t>& xs, const std::vector<int32_t>& got, F want) {
  for (size_t i = 0; i < xs.size(); ++i) {
    if (got[i] != want(xs[i])) {
      UNSCOPED_INFO("x = " << xs[i] << ": want " << want(xs[i]) << ", got " << got[i]);
      return i;
    }
  }
  return xs.size();
}

TEST_CASE("neon RoundingDivideByPOT equals the reference for every exponent", "[requantize][fixedpoint]") {
  std::mt19937_64 rng(0xF1BED);
  const std::vector<int32_t> values = EdgeValues(rng);
  for (int e = 0; e <= 31; ++e) {
    const std::vector<int32_t> minus_e(values.size(), -e);
    const auto got = Lanes(values, minus_e, [](int32x4_t x, int32x4_t s) { return neon::RoundingDivideByPOT(x, s); });
    const size_t bad = FirstMismatch(values, got, [e](int32_t x) { return reference::RoundingDivideByPOT(x, e); });
    INFO("exponent " << e);
    REQUIRE(bad == values.size());
  }
}

TEST_CASE("neon SaturatingShiftLeft and SaturatingRoundingDoublingHighMul equal the reference",
          "[requantize][fixedpoint]") {
  std::mt19937_64 rng(0x5A7);
  const std::vector<int32_t> values = EdgeValues(rng);
  for (int left = 0; left <= 31; ++left) {
    const std::vector<int32_t> shift(values.size(), left);
    const auto got = Lanes(values, shift, [](int32x4_t x, int32x4_t s) { return neon::SaturatingShiftLeft(x, s); });
    const size_t bad =
        FirstMismatch(values, got, [left](int32_t x) { return reference::SaturatingShiftLeft(x, left); });
    INFO("left " << left);
    REQUIRE(bad == values.size());
  }
  // Multipliers: the ends of QuantizeMultiplier's range, 0, and random ones; INT32_MIN x INT32_MIN saturates.
  std::vector<int32_t> mults = {0, 1, 1 << 30, (1 << 30) + 1, kMax, kMin};
  for (int i = 0; i < 200; ++i) mults.push_back(static_cast<int32_t>(rng()));
  for (int32_t m : mults) {
    const std::vector<int32_t> ms(values.size(), m);
    const auto got =
        Lanes(values, ms, [](int32x4_t x, int32x4_t b) { return neon::SaturatingRoundingDoublingHighMul(x, b); });
    const size_t bad =
        FirstMismatch(values, got, [m](int32_t a) { return reference::SaturatingRoundingDoublingHighMul(a, m); });
    INFO("b = " << m);
    REQUIRE(bad == values.size());
  }
}

TEST_CASE("neon MultiplyByQuantizedMultiplier equals the reference for every shift", "[requantize][fixedpoint]") {
  std::mt19937_64 rng(0x3131);
  const std::vector<int32_t> values = EdgeValues(rng);
  for (int shift = -31; shift <= 30; ++shift) {
    for (int32_t m : {0, 1 << 30, kMax, static_cast<int32_t>((1u << 30) | (rng() >> 34))}) {
      const std::vector<int32_t> ms(values.size(), m);
      const auto got = Lanes(values, ms, [shift](int32x4_t x, int32x4_t b) {
        return neon::MultiplyByQuantizedMultiplier(x, b, neon::SplitShift(vdupq_n_s32(shift)));
      });
      const size_t bad = FirstMismatch(values, got, [m, shift](int32_t x) {
        return reference::MultiplyByQuantizedMultiplier(x, m, shift);
      });
      INFO("multiplier " << m << ", shift " << shift);
      REQUIRE(bad == values.size());
    }
  }
}

}  // namespace
}  // namespace octet
#endif  // __aarch64__
