// HistogramObserver: a running histogram of everything observed, and the range that minimises its L2
// quantization error (PyTorch's HistogramObserver, numerics.md §2.7; the search is observers/histogram_search.h).
//
// Two variants (option histogram_variant):
//  * upstream (default), current PyTorch: upsample rate 16; ±Inf are dropped (and counted in num_skipped) whatever
//    the non-finite policy, as PyTorch drops them with a warning; histc over the exact float range; when the range
//    grows, the old histogram is split into upsample_rate sub-bins whose mid-points are re-bucketed into the new
//    bins (_upscale_histogram), and an old constant histogram moves whole, weighted by its own mass (the newest
//    upstream rule, pytorch/pytorch#156414), into the bin of its value. Reference data: tests/data/observers runs the
//    upstream forward rules on torch 1.13's operators (histc, linspace, bucketize, bincount), and octet matches it
//    bit for bit; the float details (linspace's FMA-contracted ends and 8-lane blocks) are those of 1.13's AVX2
//    kernels, so a newer torch build may differ in the last bit of a sub-bin mid-point.
//  * legacy_1_13, PyTorch 1.13 bit for bit (tests/data/observers): upsample rate 128; histc over
//    [int(min), int(max)] (truncated toward zero, pytorch/pytorch#83672: out-of-range samples are lost and bins
//    are read on the exact [min, max] grid); the first tensor, or any tensor after a constant state, resets the
//    histogram; growth by _adjust_min_max / _combine_histograms (integer down-sampling of an up-sampled grid, the
//    max relaxed). Where PyTorch would fail (a slice that overruns, a histc range that is not finite) octet clips or
//    reports an error. Two degenerate cases differ from 1.13 on purpose, because 1.13 silently loses the range
//    there: (1) after a constant state (min == max) 1.13 starts over, so one-element tensors calibrated at batch 1
//    end with the last sample's range; when the next tensor is constant or its range excludes the old value, octet
//    keeps the old mass whole at its value on the exact union range (the upstream rule); a non-constant tensor
//    whose range holds the old value starts over as in 1.13 (only the old mass is lost, not its place).
//    (2) A constant tensor meeting a non-constant state is counted in the bin of its value, where 1.13's truncated
//    histc would drop it, count it on another grid or, when both ends truncate alike, in the middle bin whatever
//    its value. Everything else follows 1.13 bit for bit.
//
// Order dependence: both variants re-bin when the range grows, so the histogram depends on how the data was
// batched and in which order (PyTorch's too). Merge(other) re-bins both histograms onto the union range with the
// upstream up-sampling rule and adds them; it is deterministic but, like observation, not order-independent.
#pragma once

#include <limits>
#include <memory>
#include <vector>

#include "observers/observer.h"
#include "observers/observer_of.h"

namespace octet {

class HistogramObserver : public ObserverOf<HistogramObserver, Observer, ObserverKind::kHistogram> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max, eps, bins
  // (2048), upsample_rate, histogram_variant, skip_non_finite.

  // _non_linear_param_search then _calculate_qparams of the range found.
  Result<QParams> CalculateQParams() const override;
  std::vector<float> min_val() const override { return {min_}; }
  std::vector<float> max_val() const override { return {max_}; }
  bool has_observations() const override { return min_ <= max_; }
  // The histogram buffer (bins entries over [min_val, max_val]; float32 like PyTorch's).
  const std::vector<float>& histogram() const { return histogram_; }

 protected:
  explicit HistogramObserver(ResolvedObserverOptions options);

  Status ObserveImpl(const Tensor& x, std::string_view name) override;
  Status MergeImpl(const Observer& other) override;
  void ResetImpl() override;
  nlohmann::json SaveStateImpl() const override;
  Status LoadStateImpl(const nlohmann::json& state) override;

 private:
  // Counts over a histc range [lo, hi] computed before the tensor's range was known (the guess is the range the
  // state predicts; it holds whenever the tensor stays inside the observed range, so one pass does both jobs).
  struct Guess {
    float lo;
    float hi;
    std::vector<uint64_t> counts;
  };
  // The histc range a tensor inside [min_val, max_val] gets, or false when it depends on the tensor.
  bool GuessRange(float* lo, float* hi) const;
  Status ObserveLegacy(std::span<const float> x, float batch_min, float batch_max, std::string_view name,
                       const Guess* guess);
  Status ObserveUpstream(std::span<const float> x, float batch_min, float batch_max, std::string_view name,
                         const Guess* guess);
  // torch.histc(x, bins, lo, hi) with histc's fall-backs (lo == hi: the data's range, then +-1), as float32 counts;
  // the guess's counts when its range is the one histc ends up with.
  Result<std::vector<float>> Histc(std::span<const float> x, double lo, double hi, float data_min, float data_max,
                                   std::string_view name, const Guess* guess) const;

  std::vector<float> histogram_;
  float min_ = std::numeric_limits<float>::infinity();
  float max_ = -std::numeric_limits<float>::infinity();
};

}  // namespace octet
