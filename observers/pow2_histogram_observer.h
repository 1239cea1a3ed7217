// Pow2HistogramObserver (octet): HistogramObserver's L2 range search (observers/histogram_search.h) run over an
// exact power-of-two histogram (observers/pow2_histogram.h) instead of PyTorch's rebinned one, so that observation,
// merging and saved state are exact and independent of batching, sharding and merge order.
//
// The searched histogram is the grid's occupied span in signed order: [-n_neg * w, n_pos * w] with w = 2^exponent,
// n_neg / n_pos the highest non-empty negative / positive magnitude bin + 1 (counts as float32, as PyTorch keeps
// them). The chosen range is clipped to the observed [min, max] and handed to _calculate_qparams; dst_nbins is
// 2^bits of the dtype, as in HistogramObserver. With bins B the grid has 2B bins per sign, at least B of them over
// [0, max |x|].
#pragma once

#include "observers/histogram_calibrator.h"
#include "observers/observer_of.h"

namespace octet {

class Pow2HistogramObserver
    : public ObserverOf<Pow2HistogramObserver, HistogramCalibrator, ObserverKind::kPow2Histogram> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max, eps, bins
  // (2048), skip_non_finite.

  Result<QParams> CalculateQParams() const override;

 protected:
  using ObserverOf::ObserverOf;
};

}  // namespace octet
