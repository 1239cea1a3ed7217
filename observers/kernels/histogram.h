// The observer histogram kernel family: counting float32 values into bins, for HistogramObserver (torch.histc's
// rule) and for the power-of-two grids of the percentile, entropy and MSE calibrators.
//
// Kernels are leaf functions: no allocation, threads or errors; histogram.inc lists them, best first, scalar last.
// Counts go to kHistogramCopies interleaved copies of the histogram (copy k at counts + k * stride), so that runs of
// equal bins do not serialise on one counter; slot 0 of each copy collects the dropped values and bin b is slot
// b + 1. The caller zeroes the copies, keeps each call below 2^32 elements and sums the copies. Every kernel gives
// counts identical to the scalar one (the bin of each value is computed with the same float operations).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/context.h"
#include "core/ukernel_list.h"
#include "observers/kernels/minmax.h"

namespace octet {

inline constexpr size_t kHistogramCopies = 4;

// torch.histc over [lo, hi] with `bins` bins (PyTorch 1.13's linear bin selection, without local search, as measured
// on its AVX2 build by tests/data/observers): values outside [lo, hi] and NaN are dropped; otherwise
// bin = int(f32(f32(f32(x - lo) / f32(hi - lo)) * f32(bins))), and bin == bins (x == hi) counts in bins - 1. The
// division comes first: multiplying first differs for bin counts that are not powers of two. Needs lo < hi, both
// finite. Copy stride: bins + 1.
struct LinearHistogramParams {
  float lo;
  float hi;
  uint32_t bins;
};
using LinearHistogramUkernelFn = void (*)(size_t n, const float* x, const LinearHistogramParams& params,
                                          uint32_t* counts);

// The linear histogram and, in the same pass, the min / max / non-finite summary of minmax.h (for observers that
// guess the histogram range before they know the tensor's range, and check the guess afterwards).
using LinearMinMaxHistogramUkernelFn = MinMaxResult (*)(size_t n, const float* x, const LinearHistogramParams& params,
                                                       uint32_t* counts);

// A signed grid of power-of-two width w: magnitude bin m = floor(|x| * inv_width) (exact, since inv_width = 1 / w
// is a power of two that the caller keeps a normal float), slot m + 1 for values whose sign bit is clear and
// m + 1 + bins for values whose sign bit is set (so -0.0 counts as a negative magnitude 0). Values with m >= bins,
// NaN and ±Inf are dropped. Copy stride: 2 * bins + 1.
struct SignedHistogramParams {
  float inv_width;
  uint32_t bins;
};
using SignedHistogramUkernelFn = void (*)(size_t n, const float* x, const SignedHistogramParams& params,
                                          uint32_t* counts);

#define OCTET_LINEAR_HISTOGRAM_UKERNEL(isa, fn) \
  void fn(size_t n, const float* x, const LinearHistogramParams& params, uint32_t* counts);
#define OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL(isa, fn) \
  MinMaxResult fn(size_t n, const float* x, const LinearHistogramParams& params, uint32_t* counts);
#define OCTET_SIGNED_HISTOGRAM_UKERNEL(isa, fn) \
  void fn(size_t n, const float* x, const SignedHistogramParams& params, uint32_t* counts);
#include "observers/kernels/histogram.inc"
#undef OCTET_LINEAR_HISTOGRAM_UKERNEL
#undef OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL
#undef OCTET_SIGNED_HISTOGRAM_UKERNEL

std::span<const UkernelEntry<LinearHistogramUkernelFn>> LinearHistogramUkernels();
std::span<const UkernelEntry<LinearMinMaxHistogramUkernelFn>> LinearMinMaxHistogramUkernels();
std::span<const UkernelEntry<SignedHistogramUkernelFn>> SignedHistogramUkernels();
// Selection for the context's ISAs, recorded as families "histogram_f32_linear", "histogram_f32_linear_minmax" and
// "histogram_f32_signed".
const UkernelEntry<LinearHistogramUkernelFn>& SelectLinearHistogramUkernel(const Context& context);
const UkernelEntry<LinearMinMaxHistogramUkernelFn>& SelectLinearMinMaxHistogramUkernel(const Context& context);
const UkernelEntry<SignedHistogramUkernelFn>& SelectSignedHistogramUkernel(const Context& context);

}  // namespace octet
