// PerChannelMinMaxObserver: a running minimum and maximum per channel along ch_axis (PyTorch's
// PerChannelMinMaxObserver, numerics.md §2.6), qparams per channel. Every tensor must have the same number of
// channels along the same axis. Merging is exact and order-independent.
//
// Beyond PyTorch (whose NaN would poison a channel): with skip_non_finite, a channel with no finite value in a
// tensor keeps its range, and CalculateQParams fails naming a channel that never saw a finite value.
#pragma once

#include <memory>
#include <vector>

#include "observers/observer.h"
#include "observers/observer_of.h"

namespace octet {

class PerChannelMinMaxObserver
    : public ObserverOf<PerChannelMinMaxObserver, Observer, ObserverKind::kPerChannelMinMax> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per_channel_affine or per_channel_symmetric), reduce_range,
  // quant_min/quant_max, eps, ch_axis (default 0; negative counts from the last dimension), skip_non_finite.

  // _calculate_qparams per channel; the QParams axis is ch_axis resolved against the observed tensors' rank.
  Result<QParams> CalculateQParams() const override;
  std::vector<float> min_val() const override { return min_; }
  std::vector<float> max_val() const override { return max_; }
  bool has_observations() const override { return !min_.empty(); }
  // The resolved channel axis of the observed tensors, -1 before the first observation.
  int axis() const { return axis_; }

 protected:
  using ObserverOf::ObserverOf;

  Status ObserveImpl(const Tensor& x, std::string_view name) override;
  Status MergeImpl(const Observer& other) override;
  void ResetImpl() override;
  nlohmann::json SaveStateImpl() const override;
  Status LoadStateImpl(const nlohmann::json& state) override;
  // Folds one batch's per-channel ranges (+inf / -inf for a channel without finite values) into the running ones.
  virtual void Update(const std::vector<float>& batch_min, const std::vector<float>& batch_max);

  std::vector<float> min_;
  std::vector<float> max_;
  int axis_ = -1;
};

}  // namespace octet
