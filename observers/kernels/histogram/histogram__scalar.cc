// Scalar histogram kernels, the reference of the family (the bin rules are in histogram.h).
#include <cmath>

#include "observers/kernels/histogram.h"

namespace octet {

void histogram_f32_linear_ukernel__scalar(size_t n, const float* x, const LinearHistogramParams& params,
                                          uint32_t* counts) {
  const float lo = params.lo;
  const float hi = params.hi;
  const float bins_f = static_cast<float>(params.bins);
  const float range = hi - lo;
  const int32_t last = static_cast<int32_t>(params.bins) - 1;
  const size_t stride = params.bins + 1;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    size_t slot = 0;
    if (v >= lo && v <= hi) {
      int32_t b = static_cast<int32_t>(((v - lo) / range) * bins_f);
      b = b < last ? b : last;
      slot = static_cast<size_t>(b) + 1;
    }
    counts[(i % kHistogramCopies) * stride + slot] += 1;
  }
}

// The reference of the fused kernel is the two reference kernels, one after the other.
MinMaxResult histogram_f32_linear_minmax_ukernel__scalar(size_t n, const float* x, const LinearHistogramParams& params,
                                                        uint32_t* counts) {
  histogram_f32_linear_ukernel__scalar(n, x, params, counts);
  return minmax_f32_ukernel__scalar(n, x);
}

void histogram_f32_signed_ukernel__scalar(size_t n, const float* x, const SignedHistogramParams& params,
                                          uint32_t* counts) {
  const float bins_f = static_cast<float>(params.bins);
  const size_t stride = 2 * size_t{params.bins} + 1;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float m = std::fabs(v) * params.inv_width;
    size_t slot = 0;
    if (m < bins_f) slot = static_cast<size_t>(m) + 1 + (std::signbit(v) ? params.bins : 0);
    counts[(i % kHistogramCopies) * stride + slot] += 1;
  }
}

}  // namespace octet
