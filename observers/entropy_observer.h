// EntropyObserver (octet): TensorRT-style entropy calibration (numerics.md §2.15): the clipping threshold whose
// quantized distribution is closest in KL divergence to the observed one, from an exact power-of-two histogram of
// |x| (observers/pow2_histogram.h), then _calculate_qparams.
//
// The algorithm of NVIDIA's pytorch_quantization (_compute_amax_entropy), with the exact arithmetic noted:
//  * H = the |x| histogram: 2048..4096 bins of power-of-two width covering [0, max |x|] (TensorRT: 2048 bins over
//    [0, amax]; here the grid is fixed by the width so that merging stays exact); bin 0 is set to bin 1's count to
//    suppress the spike of exact zeros (as NVIDIA does);
//  * L levels: (quant_max - quant_min + 1) / 2 for symmetric qschemes and for affine ones with negative values (128
//    for 8 bits), quant_max - quant_min + 1 for affine qschemes over non-negative data (256: NVIDIA's unsigned rule);
//  * for every candidate i from L to the last non-empty bin + 1: P = H[0:i] with the mass beyond added to P[i-1];
//    Q = H[0:i] merged into L groups (bin j in group floor(j * L / i), the exact form of NVIDIA's linspace /
//    digitize) and spread evenly over each group's non-empty bins; KL(P / |P|, Q / |Q|), infinite where P > 0 = Q;
//    evaluated with prefix sums in O(L) per candidate, in double;
//  * the threshold is i * width for the last i with the smallest divergence.
// The range is [-T, T] (symmetric), [min, T] (affine, non-negative data) or [-T, T] intersected with the observed
// range (affine); too few bins for L levels gives the observed range. Merging is exact and order-independent.
#pragma once

#include "observers/histogram_calibrator.h"
#include "observers/observer_of.h"

namespace octet {

class EntropyObserver : public ObserverOf<EntropyObserver, HistogramCalibrator, ObserverKind::kEntropy> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max (at most `bins`
  // levels), eps, bins (2048), skip_non_finite.

  Result<QParams> CalculateQParams() const override;
  // The threshold T of the KL search (0 before any observation).
  double Threshold() const;

 protected:
  using ObserverOf::ObserverOf;
};

}  // namespace octet
