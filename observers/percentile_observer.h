// PercentileObserver (octet): the range that keeps a percentile of the observed values, from an exact
// power-of-two histogram (observers/pow2_histogram.h), then _calculate_qparams.
//
// With percentile p (default 99.99, in [50, 100]) and N values:
//  * symmetric qschemes: T = the upper edge of the first |x| bin where the cumulative count reaches p/100 * N; the
//    range is [-T, T] clipped to the observed [min, max];
//  * affine qschemes: max = the upper edge of the first bin (in signed order) where the count reaches p/100 * N,
//    min = the lower edge of the first bin where it exceeds (1 - p/100) * N, both clipped to the observed range.
// p = 100 gives MinMaxObserver's qparams exactly. Bin edges are exact multiples of the power-of-two width, and at
// least `bins` bins cover [0, max |x|]. Merging is exact and order-independent.
#pragma once

#include "observers/histogram_calibrator.h"
#include "observers/observer_of.h"

namespace octet {

class PercentileObserver : public ObserverOf<PercentileObserver, HistogramCalibrator, ObserverKind::kPercentile> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max, eps, bins
  // (2048), percentile, skip_non_finite.

  Result<QParams> CalculateQParams() const override;

 protected:
  using ObserverOf::ObserverOf;
};

}  // namespace octet
