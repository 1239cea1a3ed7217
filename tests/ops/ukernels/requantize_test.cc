// Every compiled requantize kernel equals the scalar reference bit for bit (fp32 and q31 schemes), and the
// fixed-point helpers match their definitions.
#include <catch2/catch.hpp>

#include <cmath>

#include "ops/reference/requantize_reference.h"
#include "ops/ukernels/requantize.h"
#include "tests/test_util.h"

namespace octet {
namespace {

struct RequantizeCase {
  size_t rows, channels, acc_stride, y_stride;
  bool per_channel;
  int32_t zero_point, lo, hi;
  std::vector<int32_t> acc;
  std::vector<double> real_multipliers;
};

// Accumulators around the magnitude that the multiplier maps onto the output range, plus extremes.
template <typename T>
RequantizeCase RandomCase(std::mt19937_64& rng, size_t rows, size_t channels) {
  RequantizeCase c;
  c.rows = rows;
  c.channels = channels;
  c.acc_stride = channels + rng() % 5;  // prime-ish strides and tails
  c.y_stride = channels + rng() % 7;
  c.per_channel = rng() & 1;
  const int32_t dmin = std::numeric_limits<T>::min(), dmax = std::numeric_limits<T>::max();
  c.zero_point = dmin + static_cast<int32_t>(rng() % static_cast<uint64_t>(dmax - dmin + 1));
  c.lo = dmin;
  c.hi = dmax;
  if (rng() % 3 == 0) c.lo = c.zero_point;                                  // fused ReLU
  if (rng() % 4 == 0) c.hi = std::max(c.lo, std::min<int32_t>(dmax, c.zero_point + 60));  // ReLU6-like
  std::uniform_real_distribution<double> log_m(-14.0, 1.5);  // multipliers 1e-14 .. ~30 (shift > 0 included)
  const size_t nm = c.per_channel ? channels : 1;
  for (size_t i = 0; i < nm; ++i) c.real_multipliers.push_back(std::pow(10.0, log_m(rng)) * (1 + (rng() % 1000) * 1e-4));
  c.acc.resize(rows * c.acc_stride);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < channels; ++k) {
      const double m = c.real_multipliers[c.per_channel ? k : 0];
      const double target = std::normal_distribution<double>(0.0, 100.0)(rng) / m;
      int64_t v = static_cast<int64_t>(std::clamp(target, -2147483648.0, 2147483647.0));
      switch (rng() % 16) {
        case 0: v = INT32_MIN; break;
        case 1: v = INT32_MAX; break;
        case 2: v = static_cast<int32_t>(rng()); break;
        case 3: v = static_cast<int64_t>(rng() % 2001) - 1000; break;
        default: break;
      }
      c.acc[r * c.acc_stride + k] = static_cast<int32_t>(v);
    }
  }
  return c;
}

// Runs `kernel` and `reference` on case `c` with params `p` into outputs with a guard element past the end (both
// prefilled with 33); fails at the first differing element.
template <typename T, typename Kernel, typename Params, typename Reference>
void ExpectSameAsReference(const Kernel& kernel, const RequantizeCase& c, const Params& p, Reference reference) {
  std::vector<T> want(c.rows * c.y_stride + 1, T{33}), got(want);
  reference(c.rows, c.channels, c.acc.data(), c.acc_stride, want.data(), c.y_stride, p);
  kernel.fn(c.rows, c.channels, c.acc.data(), c.acc_stride, got.data(), c.y_stride, p);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      FAIL_CHECK(kernel.name << " rows=" << c.rows << " channels=" << c.channels << " index " << i << " want "
                             << int{want[i]} << " got " << int{got[i]});
      return;
    }
  }
}

template <typename T>
void CheckFp32(const UkernelEntry<RequantizeFp32UkernelFn<T>>& kernel, const RequantizeCase& c) {
  std::vector<float> m(c.real_multipliers.begin(), c.real_multipliers.end());
  const RequantizeFp32Params p{m.data(), c.per_channel, c.zero_point, c.lo, c.hi};
  ExpectSameAsReference<T>(kernel, c, p, reference::RequantizeFp32<T>);
}

template <typename T>
void CheckQ31(const UkernelEntry<RequantizeQ31UkernelFn<T>>& kernel, const RequantizeCase& c) {
  std::vector<int32_t> mult(c.real_multipliers.size()), shift(c.real_multipliers.size());
  for (size_t i = 0; i < mult.size(); ++i) reference::QuantizeMultiplier(c.real_multipliers[i], &mult[i], &shift[i]);
  const RequantizeQ31Params p{mult.data(), shift.data(), c.per_channel, c.zero_point, c.lo, c.hi};
  ExpectSameAsReference<T>(kernel, c, p, reference::RequantizeQ31<T>);
}

template <typename T>
void AllRequantizeKernels() {
  auto rng = testing::MakeRng(std::string("requantize") + (std::is_same_v<T, uint8_t> ? "u8" : "s8"));
  size_t distinct_outputs = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const size_t rows = 1 + rng() % 5;
    const size_t channels = trial < 70 ? static_cast<size_t>(trial) : testing::RandomSize(rng, 300);
    const RequantizeCase c = RandomCase<T>(rng, rows, channels);
    for (const auto& kernel : RequantizeFp32Ukernels<T>()) {
      if (testing::CanRun(kernel.isa, kernel.name)) CheckFp32(kernel, c);
    }
    for (const auto& kernel : RequantizeQ31Ukernels<T>()) {
      if (testing::CanRun(kernel.isa, kernel.name)) CheckQ31(kernel, c);
    }
    // Guard against a vacuous test: the reference must produce varied, mostly unsaturated outputs.
    if (channels > 16) {
      std::vector<float> m(c.real_multipliers.begin(), c.real_multipliers.end());
      std::vector<T> y(rows * c.y_stride);
      reference::RequantizeFp32(rows, channels, c.acc.data(), c.acc_stride, y.data(), c.y_stride,
                                RequantizeFp32Params{m.data(), c.per_channel, c.zero_point, c.lo, c.hi});
      std::sort(y.begin(), y.begin() + static_cast<long>(channels));
      distinct_outputs += static_cast<size_t>(std::unique(y.begin(), y.begin() + static_cast<long>(channels)) - y.begin());
    }
  }
  CHECK(distinct_outputs > 1000);
}

TEST_CASE("requantize kernels equal the reference: s32 -> u8", "[requantize]") { AllRequantizeKernels<uint8_t>(); }
TEST_CASE("requantize kernels equal the reference: s32 -> s8", "[requantize]") { AllRequantizeKernels<int8_t>(); }

// Every q31 kernel (and so each ISA's fixedpoint/<isa>.h) against the reference at every shift QuantizeMultiplier
// can produce, on accumulators that land on the rounding ties of both the doubling high multiply and the divide.
template <typename T>
void Q31EveryShift() {
  auto rng = testing::MakeRng(std::string("requantize_q31_shifts") + (std::is_same_v<T, uint8_t> ? "u8" : "s8"));
  const int32_t dmin = std::numeric_limits<T>::min(), dmax = std::numeric_limits<T>::max();
  constexpr size_t kChannels = 62;  // shifts -31 .. 30, one per channel
  constexpr size_t kRows = 97;
  std::vector<int32_t> mult(kChannels), shift(kChannels);
  for (size_t c = 0; c < kChannels; ++c) {
    shift[c] = static_cast<int32_t>(c) - 31;
    const uint32_t pick = static_cast<uint32_t>(rng() % 4);
    mult[c] = pick == 0 ? (1 << 30) : pick == 1 ? INT32_MAX : static_cast<int32_t>((1u << 30) | (rng() >> 34));
  }
  std::vector<int32_t> acc(kRows * kChannels);
  size_t inside = 0;
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t c = 0; c < kChannels; ++c) {
      // x such that x * m * 2^(shift - 31) is near a half-integer output t + 1/2 in the output range, +- a few.
      const double scale = static_cast<double>(mult[c]) * std::ldexp(1.0, shift[c] - 31);
      const double t = static_cast<double>(static_cast<int64_t>(rng() % 300) - 150) + 0.5;
      double x = std::nearbyint(t / scale) + static_cast<double>(static_cast<int64_t>(rng() % 5) - 2);
      if (r % 23 == 0) x = (r / 23) % 2 == 0 ? INT32_MIN : INT32_MAX;
      x = std::clamp(x, -2147483648.0, 2147483647.0);
      acc[r * kChannels + c] = static_cast<int32_t>(x);
      const int32_t want = reference::MultiplyByQuantizedMultiplier(acc[r * kChannels + c], mult[c], shift[c]);
      inside += want > -100 && want < 100 ? 1 : 0;
    }
  }
  CHECK(inside > kRows * kChannels / 3);  // a good share of the outputs are not clamped away
  for (const bool per_channel : {true, false}) {
    const RequantizeQ31Params p{mult.data(), shift.data(), per_channel, 3, dmin, dmax};
    std::vector<T> want(acc.size()), got(acc.size());
    reference::RequantizeQ31(kRows, kChannels, acc.data(), kChannels, want.data(), kChannels, p);
    for (const auto& kernel : RequantizeQ31Ukernels<T>()) {
      if (!testing::CanRun(kernel.isa, kernel.name)) continue;
      std::fill(got.begin(), got.end(), T{0});
      kernel.fn(kRows, kChannels, acc.data(), kChannels, got.data(), kChannels, p);
      for (size_t i = 0; i < want.size(); ++i) {
        if (want[i] != got[i]) {
          FAIL_CHECK(kernel.name << " per_channel=" << per_channel << " acc " << acc[i] << " shift "
                                 << shift[per_channel ? i % kChannels : 0] << " want " << int{want[i]} << " got "
                                 << int{got[i]});
          break;
        }
      }
    }
  }
}

TEST_CASE("requantize q31 kernels equal the reference at every shift and rounding tie", "[requantize]") {
  Q31EveryShift<uint8_t>();
  Q31EveryShift<int8_t>();
}

TEST_CASE("fixed-point helpers match gemmlowp's definitions", "[requantize]") {
  using reference::RoundingDivideByPOT;
  using reference::SaturatingRoundingDoublingHighMul;
  CHECK(SaturatingRoundingDoublingHighMul(INT32_MIN, INT32_MIN) == INT32_MAX);
  CHECK(SaturatingRoundingDoublingHighMul(1 << 30, 1 << 30) == 1 << 29);
  CHECK(SaturatingRoundingDoublingHighMul(1 << 30, 1) == 1);         // +0.5 -> 1: ties go toward +infinity
  CHECK(SaturatingRoundingDoublingHighMul(-(1 << 30), 1) == 0);      // -0.5 -> 0
  CHECK(SaturatingRoundingDoublingHighMul(-(1 << 30) - 1, 1) == -1);
  CHECK(RoundingDivideByPOT(5, 1) == 3);    // 2.5 -> 3 (ties away from zero)
  CHECK(RoundingDivideByPOT(-5, 1) == -3);  // -2.5 -> -3
  CHECK(RoundingDivideByPOT(-4, 1) == -2);
  CHECK(RoundingDivideByPOT(INT32_MIN, 31) == -1);
  CHECK(RoundingDivideByPOT(INT32_MAX, 31) == 1);
  int32_t m = 0, s = 0;
  reference::QuantizeMultiplier(0.5, &m, &s);
  CHECK(m == (1 << 30));
  CHECK(s == 0);
  reference::QuantizeMultiplier(1e-20, &m, &s);
  CHECK(m == 0);
  CHECK(s == 0);
  reference::QuantizeMultiplier(0.0, &m, &s);
  CHECK(m == 0);
  // Brute force: SRDHM equals floor(a*b/2^31 + 1/2) computed in long double (exact for these magnitudes).
  auto rng = testing::MakeRng("srdhm");
  for (int i = 0; i < 100000; ++i) {
    const int32_t a = static_cast<int32_t>(rng()), b = static_cast<int32_t>(rng() >> 1);
    const long double exact = static_cast<long double>(a) * b / 2147483648.0L;
    const long double rounded = std::floor(exact + 0.5L);
    REQUIRE(SaturatingRoundingDoublingHighMul(a, b) == static_cast<int32_t>(rounded));
  }
}

}  // namespace
}  // namespace octet
