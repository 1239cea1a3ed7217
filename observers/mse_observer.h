// MseObserver (octet): the range whose quantization minimises the mean squared error over the observed
// distribution, from an exact power-of-two histogram (observers/pow2_histogram.h), then _calculate_qparams.
//
// Candidates shrink the observed range toward zero: [a * min, a * max] for a = k / 100, k = 1..100, then a finer
// pass of 100 steps over +-0.01 around the best a (resolution 1e-4). Each candidate's qparams come from
// _calculate_qparams with the observer's qscheme and range; its error is sum(count * (fq(c) - c)^2) over the
// non-empty bins, c the bin centre clipped to the observed range and fq the fake-quantize of DESIGN.md §4
// ((clamp(zp + rne(c * (1 / scale)), quant_min, quant_max) - zp) * scale, float32). The smallest error wins (ties
// to the larger range). Merging is exact and order-independent.
#pragma once

#include "observers/histogram_calibrator.h"
#include "observers/observer_of.h"

namespace octet {

class MseObserver : public ObserverOf<MseObserver, HistogramCalibrator, ObserverKind::kMse> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max, eps, bins
  // (2048), skip_non_finite.

  Result<QParams> CalculateQParams() const override;
  // The chosen shrink factor a in (0, 1] (1 before any observation).
  double Shrink() const;
  // The histogram estimate of the mean squared quantization error of [a * min, a * max].
  double ExpectedError(double a) const;

 protected:
  using ObserverOf::ObserverOf;
};

}  // namespace octet
