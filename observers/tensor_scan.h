// The reductions observers run over a tensor: its range per tensor or per channel, with NaN and ±Inf found and
// counted; and histograms of it. Vectorised through the kernel families in observers/kernels, split over the
// context's threads in tiles that depend only on the size, and combined in tile order, so every result is identical
// at any thread count and on every ISA.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/context.h"
#include "core/shape.h"

namespace octet {

// Elements per parallel tile.
inline constexpr int64_t kScanTile = int64_t{1} << 18;

// Where a tensor is not finite.
struct NonFiniteStats {
  int64_t num_nan = 0;
  int64_t num_inf = 0;             // +Inf and -Inf
  int64_t first_index = -1;        // flat index of the first non-finite element, -1 if none
  float first_value = 0.0f;        // that element
  int64_t count() const { return num_nan + num_inf; }
};

// The range of the finite elements of x (min = +inf and max = -inf when there are none). A -0.0 extreme is reported
// as +0.0, so the result does not depend on the order of the comparisons.
struct RangeScan {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  NonFiniteStats nonfinite;
};
RangeScan ScanRange(const Context& context, std::span<const float> x);

// Per-channel ranges of a row-major tensor of `shape` along `axis` (0 <= axis < rank): channel c covers the
// elements whose index along `axis` is c. Channels with no finite element get (+inf, -inf).
struct ChannelRangeScan {
  std::vector<float> min;
  std::vector<float> max;
  NonFiniteStats nonfinite;
};
ChannelRangeScan ScanChannelRanges(const Context& context, std::span<const float> x, const Shape& shape, int axis);

// torch.histc(x, bins, lo, hi) as exact integer counts (HistogramObserver's rule, observers/kernels/histogram.h):
// values outside [lo, hi] and NaN are not counted. Needs lo < hi, both finite.
std::vector<uint64_t> LinearHistogram(const Context& context, std::span<const float> x, float lo, float hi,
                                      int64_t bins);

// LinearHistogram over a guessed range and, in the same pass, the range of x (ScanRange's min / max when
// `nonfinite` is false; when it is true, nothing but the flag is meaningful and the caller takes ScanRange's path).
struct HistogramRangeScan {
  std::vector<uint64_t> counts;
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  bool nonfinite = false;
};
HistogramRangeScan LinearHistogramAndRange(const Context& context, std::span<const float> x, float lo, float hi,
                                           int64_t bins);

// Counts on a signed grid of width 2^exponent with `bins` magnitude bins per sign: [0, bins) for values whose sign
// bit is clear, [bins, 2 bins) for the others; bin floor(|x| / 2^exponent), exact. Values beyond the grid, NaN and
// ±Inf are not counted.
std::vector<uint64_t> SignedPow2Histogram(const Context& context, std::span<const float> x, int exponent,
                                          int64_t bins);

}  // namespace octet
