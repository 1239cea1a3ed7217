// HistogramCalibrator: the common part of PercentileObserver, EntropyObserver and MseObserver: the exact running
// range and a Pow2Histogram of every finite value observed, with 2 * bins bins per sign (so at least `bins` bins
// cover [0, max |x|]). Observation, merging and state are exact and independent of batching and merge order; the
// subclasses only choose the range that CalculateQParams hands to _calculate_qparams.
#pragma once

#include <limits>
#include <memory>

#include "observers/observer.h"
#include "observers/pow2_histogram.h"

namespace octet {

class HistogramCalibrator : public Observer {
 public:
  std::vector<float> min_val() const override { return {min_}; }
  std::vector<float> max_val() const override { return {max_}; }
  bool has_observations() const override { return min_ <= max_; }
  const Pow2Histogram& grid() const { return grid_; }

 protected:
  explicit HistogramCalibrator(ResolvedObserverOptions options)
      : Observer(std::move(options)), grid_(2 * this->options().bins) {}

  Status ObserveImpl(const Tensor& x, std::string_view name) override;
  Status MergeImpl(const Observer& other) override;
  void ResetImpl() override;
  nlohmann::json SaveStateImpl() const override;
  Status LoadStateImpl(const nlohmann::json& state) override;

  // _calculate_qparams over [lo, hi] (clipped to the observed range), or PyTorch's default before any observation.
  Result<QParams> QParamsFor(float lo, float hi) const;

  float min_ = std::numeric_limits<float>::infinity();
  float max_ = -std::numeric_limits<float>::infinity();
  Pow2Histogram grid_;
};

}  // namespace octet
