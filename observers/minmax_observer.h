// MinMaxObserver: qparams from the running minimum and maximum of everything observed (PyTorch's MinMaxObserver,
// numerics.md §2.4). Merging is exact and order-independent: min of the minimums, max of the maximums.
#pragma once

#include <limits>
#include <memory>

#include "observers/observer.h"
#include "observers/observer_of.h"

namespace octet {

class MinMaxObserver : public ObserverOf<MinMaxObserver, Observer, ObserverKind::kMinMax> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max, eps,
  // skip_non_finite.

  // _calculate_qparams(min_val, max_val) (observers/qparams_math.h).
  Result<QParams> CalculateQParams() const override;
  std::vector<float> min_val() const override { return {min_}; }
  std::vector<float> max_val() const override { return {max_}; }
  bool has_observations() const override { return min_ <= max_; }

 protected:
  using ObserverOf::ObserverOf;

  Status ObserveImpl(const Tensor& x, std::string_view name) override;
  Status MergeImpl(const Observer& other) override;
  void ResetImpl() override;
  nlohmann::json SaveStateImpl() const override;
  Status LoadStateImpl(const nlohmann::json& state) override;
  // Folds one batch's finite range into the running range (min / max here; the moving average overrides it).
  virtual void Update(float batch_min, float batch_max);

  float min_ = std::numeric_limits<float>::infinity();
  float max_ = -std::numeric_limits<float>::infinity();
};

}  // namespace octet
