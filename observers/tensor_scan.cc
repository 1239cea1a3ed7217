// Tensor reductions for the observers: tiles over the context's threads, kernels from observers/kernels.
#include "observers/tensor_scan.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/threading.h"
#include "observers/kernels/histogram.h"
#include "observers/kernels/minmax.h"

namespace octet {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

float PositiveZero(float v) { return v == 0.0f ? 0.0f : v; }

void NoteNonFinite(NonFiniteStats* s, int64_t index, float v) {
  if (std::isnan(v)) {
    ++s->num_nan;
  } else {
    ++s->num_inf;
  }
  if (s->first_index < 0) {
    s->first_index = index;
    s->first_value = v;
  }
}

int64_t NumTiles(int64_t n) { return (n + kScanTile - 1) / kScanTile; }

}  // namespace

RangeScan ScanRange(const Context& context, std::span<const float> x) {
  RangeScan out;
  const int64_t n = static_cast<int64_t>(x.size());
  if (n == 0) return out;
  const MinMaxUkernelFn kernel = SelectMinMaxUkernel(context).fn;
  std::vector<MinMaxResult> tiles(static_cast<size_t>(NumTiles(n)));
  ParallelFor(context, n, kScanTile, [&](int64_t begin, int64_t end) {
    tiles[static_cast<size_t>(begin / kScanTile)] = kernel(static_cast<size_t>(end - begin), x.data() + begin);
  });
  bool nonfinite = false;
  for (const MinMaxResult& t : tiles) {
    nonfinite |= t.nonfinite;
    out.min = t.min < out.min ? t.min : out.min;
    out.max = t.max > out.max ? t.max : out.max;
  }
  if (nonfinite) {
    // The exceptional path: one plain pass that counts the non-finite values and skips them.
    out = RangeScan();
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[static_cast<size_t>(i)];
      if (!std::isfinite(v)) {
        NoteNonFinite(&out.nonfinite, i, v);
        continue;
      }
      out.min = v < out.min ? v : out.min;
      out.max = v > out.max ? v : out.max;
    }
  }
  out.min = PositiveZero(out.min);
  out.max = PositiveZero(out.max);
  return out;
}

ChannelRangeScan ScanChannelRanges(const Context& context, std::span<const float> x, const Shape& shape, int axis) {
  const int64_t channels = shape.dim(axis);
  const int64_t outer = shape.Product(0, axis);
  const int64_t inner = shape.Product(axis + 1, shape.rank());
  ChannelRangeScan out;
  out.min.assign(static_cast<size_t>(channels), kInfinity);
  out.max.assign(static_cast<size_t>(channels), -kInfinity);
  if (x.empty()) return out;
  bool nonfinite = false;
  if (inner >= 64) {
    // Contiguous runs of `inner` elements: one kernel call per run, channels split over the threads.
    const MinMaxUkernelFn kernel = SelectMinMaxUkernel(context).fn;
    std::vector<uint8_t> bad(static_cast<size_t>(channels), 0);
    const int64_t tile = std::max<int64_t>(1, kScanTile / std::max<int64_t>(1, outer * inner));
    ParallelFor(context, channels, tile, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        float mn = kInfinity, mx = -kInfinity;
        for (int64_t o = 0; o < outer; ++o) {
          const MinMaxResult r = kernel(static_cast<size_t>(inner), x.data() + (o * channels + c) * inner);
          bad[static_cast<size_t>(c)] |= r.nonfinite ? 1 : 0;
          mn = r.min < mn ? r.min : mn;
          mx = r.max > mx ? r.max : mx;
        }
        out.min[static_cast<size_t>(c)] = mn;
        out.max[static_cast<size_t>(c)] = mx;
      }
    });
    for (uint8_t b : bad) nonfinite |= b != 0;
  } else {
    // Short runs (channels last, small kernels): running min/max over rows of channels * inner elements.
    const int64_t row = channels * inner;
    std::vector<float> mn(static_cast<size_t>(row), kInfinity), mx(static_cast<size_t>(row), -kInfinity);
    for (int64_t o = 0; o < outer; ++o) {
      const float* r = x.data() + o * row;
      for (int64_t k = 0; k < row; ++k) {
        const float v = r[k];
        mn[static_cast<size_t>(k)] = v < mn[static_cast<size_t>(k)] ? v : mn[static_cast<size_t>(k)];
        mx[static_cast<size_t>(k)] = v > mx[static_cast<size_t>(k)] ? v : mx[static_cast<size_t>(k)];
        nonfinite |= !(v - v == 0.0f);
      }
    }
    for (int64_t k = 0; k < row; ++k) {
      const size_t c = static_cast<size_t>(k / inner);
      out.min[c] = mn[static_cast<size_t>(k)] < out.min[c] ? mn[static_cast<size_t>(k)] : out.min[c];
      out.max[c] = mx[static_cast<size_t>(k)] > out.max[c] ? mx[static_cast<size_t>(k)] : out.max[c];
    }
  }
  if (nonfinite) {
    std::fill(out.min.begin(), out.min.end(), kInfinity);
    std::fill(out.max.begin(), out.max.end(), -kInfinity);
    const int64_t n = static_cast<int64_t>(x.size());
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[static_cast<size_t>(i)];
      if (!std::isfinite(v)) {
        NoteNonFinite(&out.nonfinite, i, v);
        continue;
      }
      const size_t c = static_cast<size_t>((i / inner) % channels);
      out.min[c] = v < out.min[c] ? v : out.min[c];
      out.max[c] = v > out.max[c] ? v : out.max[c];
    }
  }
  for (size_t c = 0; c < out.min.size(); ++c) {
    out.min[c] = PositiveZero(out.min[c]);
    out.max[c] = PositiveZero(out.max[c]);
  }
  return out;
}

namespace {

// Elements per histogram tile: smaller than kScanTile, since a tile costs no scratch of its own here, so that two
// or more threads share a batch evenly.
constexpr int64_t kHistogramTile = int64_t{1} << 16;
// Elements per round of tiles: each thread's uint32 counters are summed into the uint64 result after every round,
// long before they could overflow.
constexpr int64_t kHistogramRound = int64_t{1} << 30;

// Runs a histogram kernel over tiles with `slots` slots per copy (slot 0 = dropped values) and returns the summed
// counts of slots 1..slots-1; a kernel that returns a MinMaxResult has the tiles' results combined into *range.
// Every thread counts its tiles into its own kHistogramCopies copies (a scratch region per thread, cache-line
// aligned, so no two threads write one line), zeroed and summed once per call rather than once per tile. Counts are
// integers and min / max are exact, so the result does not depend on which thread counted which tile.
template <typename Fn, typename Params>
std::vector<uint64_t> CountTiles(const Context& context, std::span<const float> x, Fn kernel, const Params& params,
                                 size_t slots, MinMaxResult* range = nullptr) {
  constexpr bool kHasRange = std::is_same_v<decltype(kernel(0, nullptr, params, nullptr)), MinMaxResult>;
  const size_t threads = static_cast<size_t>(std::max(1, context.threads()));
  const size_t region = (slots * kHistogramCopies + 15) / 16 * 16;  // 64-byte multiple
  // Reused across calls by the calling thread: no allocation (nor page faults) per observed tensor. A call nested
  // in one that holds it (a task stolen while this thread waits on its tiles) counts in its own buffer.
  thread_local std::vector<uint32_t> reused;
  thread_local bool reused_busy = false;
  std::vector<uint32_t> own;
  const bool nested = reused_busy;
  std::vector<uint32_t>& scratch = nested ? own : reused;
  if (scratch.size() < region * threads + 16) scratch.resize(region * threads + 16);
  reused_busy = true;
  uint32_t* base = scratch.data();
  base += (16 - (reinterpret_cast<uintptr_t>(base) / sizeof(uint32_t)) % 16) % 16;  // 64-byte aligned
  std::vector<MinMaxResult> ranges(threads, MinMaxResult{kInfinity, -kInfinity, false});
  std::vector<uint64_t> out(slots - 1, 0);
  const int64_t n = static_cast<int64_t>(x.size());
  for (int64_t round = 0; round < n; round += kHistogramRound) {
    const int64_t len = std::min(kHistogramRound, n - round);
    const float* xr = x.data() + round;
    std::fill(base, base + region * threads, 0u);
    ParallelForSlots(context, len, kHistogramTile, [&](int64_t begin, int64_t end, int slot) {
      uint32_t* counts = base + static_cast<size_t>(slot) * region;
      if constexpr (kHasRange) {
        const MinMaxResult r = kernel(static_cast<size_t>(end - begin), xr + begin, params, counts);
        MinMaxResult& acc = ranges[static_cast<size_t>(slot)];
        acc.min = r.min < acc.min ? r.min : acc.min;
        acc.max = r.max > acc.max ? r.max : acc.max;
        acc.nonfinite |= r.nonfinite;
      } else {
        kernel(static_cast<size_t>(end - begin), xr + begin, params, counts);
      }
    });
    for (size_t t = 0; t < threads; ++t) {
      const uint32_t* c = base + t * region;
      // Each thread counted at most kHistogramRound < 2^32 elements this round, so the uint32 sum is exact.
      for (size_t s = 1; s < slots; ++s) {
        uint32_t sum = 0;
        for (size_t copy = 0; copy < kHistogramCopies; ++copy) sum += c[copy * slots + s];
        out[s - 1] += sum;
      }
    }
  }
  reused_busy = nested;
  if (range != nullptr) {
    *range = MinMaxResult{kInfinity, -kInfinity, false};
    for (const MinMaxResult& r : ranges) {
      range->min = r.min < range->min ? r.min : range->min;
      range->max = r.max > range->max ? r.max : range->max;
      range->nonfinite |= r.nonfinite;
    }
  }
  return out;
}

}  // namespace

std::vector<uint64_t> LinearHistogram(const Context& context, std::span<const float> x, float lo, float hi,
                                      int64_t bins) {
  const LinearHistogramParams params{lo, hi, static_cast<uint32_t>(bins)};
  return CountTiles(context, x, SelectLinearHistogramUkernel(context).fn, params, static_cast<size_t>(bins) + 1);
}

HistogramRangeScan LinearHistogramAndRange(const Context& context, std::span<const float> x, float lo, float hi,
                                           int64_t bins) {
  const LinearHistogramParams params{lo, hi, static_cast<uint32_t>(bins)};
  MinMaxResult range{};
  HistogramRangeScan out;
  out.counts = CountTiles(context, x, SelectLinearMinMaxHistogramUkernel(context).fn, params,
                          static_cast<size_t>(bins) + 1, &range);
  out.min = PositiveZero(range.min);
  out.max = PositiveZero(range.max);
  out.nonfinite = range.nonfinite;
  return out;
}

std::vector<uint64_t> SignedPow2Histogram(const Context& context, std::span<const float> x, int exponent,
                                          int64_t bins) {
  // 2^-exponent must be a normal float for the kernels' exact float multiply; otherwise count in double here.
  if (exponent > -127 && exponent < 126) {
    const SignedHistogramParams params{std::ldexp(1.0f, -exponent), static_cast<uint32_t>(bins)};
    return CountTiles(context, x, SelectSignedHistogramUkernel(context).fn, params,
                      2 * static_cast<size_t>(bins) + 1);
  }
  std::vector<uint64_t> out(2 * static_cast<size_t>(bins), 0);
  const double inv = std::ldexp(1.0, -exponent);
  for (float v : x) {
    const double m = std::fabs(static_cast<double>(v)) * inv;
    if (!(m < static_cast<double>(bins))) continue;
    out[static_cast<size_t>(m) + (std::signbit(v) ? static_cast<size_t>(bins) : 0)] += 1;
  }
  return out;
}

}  // namespace octet
