// Every compiled observer kernel (observers/kernels: min/max, linear and signed histograms) equals the scalar one,
// on sizes around every vector width, with NaN / ±Inf at any position, values on bin edges and beyond the range.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "observers/tensor_scan.h"
#include "tests/observers/observer_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kInf;
using testing::kNan;

std::vector<size_t> Sizes(std::mt19937_64& rng) {
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 70; ++n) sizes.push_back(n);
  for (size_t n : {127, 128, 129, 255, 256, 257, 1023, 1024, 1025}) sizes.push_back(n);
  for (int i = 0; i < 10; ++i) sizes.push_back(testing::RandomSize(rng, 5000));
  return sizes;
}

TEST_CASE("min/max kernels equal the scalar kernel", "[observers]") {
  auto rng = testing::MakeRng("minmax kernels");
  const auto sizes = Sizes(rng);
  for (const auto& k : MinMaxUkernels()) {
    if (!testing::CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : sizes) {
      std::vector<float> x = testing::AssortedFloats(rng, n);
      for (int variant = 0; variant < 5; ++variant) {
        std::vector<float> y = x;
        const size_t at = rng() % n;  // includes the tail past the last full vector
        if (variant == 1) y[at] = kNan;
        if (variant == 2) y[at] = kInf;
        if (variant == 3) y[at] = -kInf;
        if (variant == 4) y[n - 1] = kNan;
        const MinMaxResult want = minmax_f32_ukernel__scalar(n, y.data());
        const MinMaxResult got = k.fn(n, y.data());
        INFO("n " << n << " variant " << variant << " at " << at);
        REQUIRE(got.nonfinite == want.nonfinite);
        CHECK(got.nonfinite == (variant != 0));
        if (!want.nonfinite) {
          CHECK(got.min == want.min);
          CHECK(got.max == want.max);
          CHECK(want.min == *std::min_element(y.begin(), y.end()));
          CHECK(want.max == *std::max_element(y.begin(), y.end()));
        }
      }
    }
  }
}

template <typename Fn, typename Params>
std::vector<uint64_t> Count(Fn fn, const std::vector<float>& x, const Params& p, size_t slots) {
  std::vector<uint32_t> c(slots * kHistogramCopies, 0);
  fn(x.size(), x.data(), p, c.data());
  std::vector<uint64_t> out(slots, 0);
  for (size_t k = 0; k < kHistogramCopies; ++k) {
    for (size_t s = 0; s < slots; ++s) out[s] += c[k * slots + s];
  }
  return out;
}

TEST_CASE("linear histogram kernels equal the scalar kernel and torch.histc's rule", "[observers]") {
  auto rng = testing::MakeRng("linear histogram kernels");
  const auto sizes = Sizes(rng);
  for (const auto& k : LinearHistogramUkernels()) {
    if (!testing::CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : sizes) {
      const uint32_t bins = 1 + static_cast<uint32_t>(rng() % 3000);
      float lo = std::ldexp(static_cast<float>(static_cast<int>(rng() % 200) - 100), -static_cast<int>(rng() % 10));
      float hi = lo + std::exp2(static_cast<float>(static_cast<int>(rng() % 20) - 8)) * 3.1f;
      if (rng() % 4 == 0) {  // integer ends, as PyTorch 1.13's int() truncation makes them
        lo = std::trunc(lo);
        hi = std::trunc(hi) + 1.0f;
      }
      std::vector<float> x(n);
      std::uniform_real_distribution<float> u(lo - (hi - lo) * 0.2f, hi + (hi - lo) * 0.2f);
      for (auto& v : x) v = u(rng);
      for (size_t i = 0; i < n; i += 7) x[i] = (i % 14 == 0) ? lo : hi;  // both ends are inside the range
      if (n > 3) x[n / 3] = kNan;
      if (n > 5) x[n / 5] = -kInf;
      // Values on and next to every bin edge, where a quotient computed without division would show.
      for (size_t i = 2; i < n; i += 3) {
        const float edge = lo + static_cast<float>(rng() % (bins + 1)) * ((hi - lo) / static_cast<float>(bins));
        x[i] = (i % 2 == 0) ? edge : std::nextafter(edge, (i % 4 == 1) ? kInf : -kInf);
      }
      if (n > 3) x[n / 3] = kNan;
      if (n > 5) x[n / 5] = -kInf;
      const LinearHistogramParams p{lo, hi, bins};
      const auto want = Count(histogram_f32_linear_ukernel__scalar, x, p, bins + 1);
      const auto got = Count(k.fn, x, p, bins + 1);
      INFO("n " << n << " bins " << bins << " [" << lo << ", " << hi << "]");
      REQUIRE(got == want);
      // The fused kernel of the same ISA: the same counts, and min/max's summary.
      for (const auto& f : LinearMinMaxHistogramUkernels()) {
        if (f.isa != k.isa) continue;
        std::vector<uint32_t> c((bins + 1) * kHistogramCopies, 0);
        const MinMaxResult r = f.fn(x.size(), x.data(), p, c.data());
        std::vector<uint64_t> fused(bins + 1, 0);
        for (size_t copy = 0; copy < kHistogramCopies; ++copy) {
          for (size_t s = 0; s <= bins; ++s) fused[s] += c[copy * (bins + 1) + s];
        }
        INFO(f.name);
        CHECK(fused == want);
        const MinMaxResult m = minmax_f32_ukernel__scalar(n, x.data());
        CHECK(r.nonfinite == m.nonfinite);
        if (!m.nonfinite) {
          CHECK(r.min == m.min);
          CHECK(r.max == m.max);
        }
      }
      // The rule itself, element by element.
      std::vector<uint64_t> rule(bins + 1, 0);
      for (float v : x) {
        if (!(v >= lo && v <= hi)) {
          ++rule[0];
          continue;
        }
        int64_t b = static_cast<int64_t>(((v - lo) / (hi - lo)) * static_cast<float>(bins));
        if (b == bins) b = bins - 1;
        ++rule[static_cast<size_t>(b) + 1];
      }
      CHECK(want == rule);
    }
  }
}

TEST_CASE("signed power-of-two histogram kernels equal the scalar kernel", "[observers]") {
  auto rng = testing::MakeRng("signed histogram kernels");
  const auto sizes = Sizes(rng);
  for (const auto& k : SignedHistogramUkernels()) {
    if (!testing::CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : sizes) {
      const uint32_t bins = 16 + static_cast<uint32_t>(rng() % 4096);
      const int exponent = static_cast<int>(rng() % 60) - 40;
      std::vector<float> x = testing::AssortedFloats(rng, n);
      for (auto& v : x) v = std::ldexp(v, exponent + 9);
      for (size_t i = 0; i < n; i += 5) x[i] = std::ldexp(static_cast<float>(rng() % (2 * bins)), exponent);
      if (n > 2) x[1] = -0.0f;
      if (n > 4) x[3] = kNan;
      if (n > 6) x[n - 2] = -kInf;
      const SignedHistogramParams p{std::ldexp(1.0f, -exponent), bins};
      const auto want = Count(histogram_f32_signed_ukernel__scalar, x, p, 2 * bins + 1);
      const auto got = Count(k.fn, x, p, 2 * bins + 1);
      INFO("n " << n << " bins " << bins << " exponent " << exponent);
      REQUIRE(got == want);
      std::vector<uint64_t> rule(2 * bins + 1, 0);
      for (float v : x) {
        const double m = std::floor(std::fabs(static_cast<double>(v)) * std::ldexp(1.0, -exponent));
        if (!(m < bins)) {
          ++rule[0];
          continue;
        }
        ++rule[static_cast<size_t>(m) + 1 + (std::signbit(v) ? bins : 0)];
      }
      CHECK(want == rule);
    }
  }
}

TEST_CASE("linear histogram kernels on tiny and huge ranges, constant inputs and ties", "[observers]") {
  auto rng = testing::MakeRng("linear histogram kernels, awkward ranges");
  const auto sizes = Sizes(rng);
  for (const auto& k : LinearMinMaxHistogramUkernels()) {
    if (!testing::CanRun(k.isa, k.name)) continue;
    INFO(k.name);
    for (size_t n : sizes) {
      // Ranges below 2^-60 and above 2^60 take the division rather than the reciprocal; the others sit near them.
      const int scale = std::array<int, 6>{-75, -61, -59, 59, 61, 75}[rng() % 6];
      const uint32_t bins = 1 + static_cast<uint32_t>(rng() % 2500);
      const float lo = std::ldexp(static_cast<float>(static_cast<int>(rng() % 7) - 3), scale);
      const float hi = lo + std::ldexp(1.0f + static_cast<float>(rng() % 5), scale);
      std::vector<float> x(n);
      std::uniform_real_distribution<float> u(lo - (hi - lo) * 0.1f, hi + (hi - lo) * 0.1f);
      const int shape = static_cast<int>(rng() % 3);
      for (size_t i = 0; i < n; ++i) {
        if (shape == 0) {
          x[i] = u(rng);
        } else if (shape == 1) {
          x[i] = lo + (hi - lo) * 0.375f;  // all equal
        } else {
          x[i] = (i > 0 && rng() % 3 != 0) ? x[i - 1] : u(rng);  // runs of ties, into the same copy and the next
        }
      }
      if (n > 9 && rng() % 2 == 0) x[rng() % n] = kNan;
      if (n > 9 && rng() % 2 == 0) x[rng() % n] = kInf;
      const LinearHistogramParams p{lo, hi, bins};
      const auto want = Count(histogram_f32_linear_ukernel__scalar, x, p, bins + 1);
      std::vector<uint32_t> c((bins + 1) * kHistogramCopies, 0);
      const MinMaxResult r = k.fn(x.size(), x.data(), p, c.data());
      std::vector<uint64_t> got(bins + 1, 0);
      for (size_t copy = 0; copy < kHistogramCopies; ++copy) {
        for (size_t s = 0; s <= bins; ++s) got[s] += c[copy * (bins + 1) + s];
      }
      INFO("n " << n << " bins " << bins << " [" << lo << ", " << hi << "] shape " << shape);
      REQUIRE(got == want);
      const MinMaxResult m = minmax_f32_ukernel__scalar(n, x.data());
      CHECK(r.nonfinite == m.nonfinite);
      if (!m.nonfinite) {
        CHECK(r.min == m.min);
        CHECK(r.max == m.max);
      }
    }
  }
}

// The tiled, threaded entry points of observers/tensor_scan.h: every ISA and thread count gives the scalar kernel's
// counts (and, fused, ScanRange's range), on sizes around the tile edges.
TEST_CASE("tensor histograms equal the scalar kernel at every ISA and thread count", "[observers]") {
  auto rng = testing::MakeRng("tensor histograms");
  std::vector<size_t> sizes = {0, 1, 65535, 65536, 65537, 3 * 65536 + 17};
  for (int i = 0; i < 3; ++i) sizes.push_back(testing::RandomSize(rng, 400000));
  for (size_t n : sizes) {
    std::vector<float> x = testing::AssortedFloats(rng, n);
    const int nonfinite = static_cast<int>(rng() % 3);  // none, a NaN, an Inf
    if (n > 0 && nonfinite == 1) x[rng() % n] = kNan;
    if (n > 0 && nonfinite == 2) x[rng() % n] = -kInf;
    const uint32_t bins = 1 + static_cast<uint32_t>(rng() % 3000);
    const float lo = -2.0f - static_cast<float>(rng() % 3), hi = 1.0f + static_cast<float>(rng() % 4);
    const LinearHistogramParams p{lo, hi, bins};
    std::vector<uint64_t> want = Count(histogram_f32_linear_ukernel__scalar, x, p, bins + 1);
    want.erase(want.begin());  // the dropped values' slot
    const int exponent = static_cast<int>(rng() % 20) - 14;
    const uint32_t signed_bins = 16 + static_cast<uint32_t>(rng() % 2000);
    const SignedHistogramParams sp{std::ldexp(1.0f, -exponent), signed_bins};
    std::vector<uint64_t> want_signed = Count(histogram_f32_signed_ukernel__scalar, x, sp, 2 * signed_bins + 1);
    want_signed.erase(want_signed.begin());
    const RangeScan range = ScanRange(testing::ScalarContext(), x);
    for (Isa isa : testing::ObserverKernelIsas()) {
      for (int threads = 1; threads <= 3; ++threads) {
        INFO("n " << n << " bins " << bins << " isa " << IsaName(isa) << " threads " << threads);
        const Context context = testing::ContextFor(isa, threads);
        CHECK(LinearHistogram(context, x, lo, hi, bins) == want);
        const HistogramRangeScan fused = LinearHistogramAndRange(context, x, lo, hi, bins);
        CHECK(fused.counts == want);
        REQUIRE(fused.nonfinite == (range.nonfinite.count() > 0));
        if (!fused.nonfinite) {
          CHECK(testing::SameFloat(fused.min, range.min));
          CHECK(testing::SameFloat(fused.max, range.max));
        }
        CHECK(SignedPow2Histogram(context, x, exponent, signed_bins) == want_signed);
      }
    }
  }
}

}  // namespace
}  // namespace octet
