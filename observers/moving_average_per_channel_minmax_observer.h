// MovingAveragePerChannelMinMaxObserver: MovingAverageMinMaxObserver's average per channel (PyTorch's
// MovingAveragePerChannelMinMaxObserver): the first tensor sets each channel's range, then, in float32,
//   min_val[c] = min_val[c] + c * (batch_min[c] - min_val[c])   (same for max_val).
// Order-dependent like every moving average; Merge(other) treats other's ranges as one more batch (see
// moving_average_minmax_observer.h). With skip_non_finite, a channel without finite values in a batch keeps its
// average, and a channel that had none yet takes the batch's range directly.
#pragma once

#include "observers/observer_of.h"
#include "observers/per_channel_minmax_observer.h"

namespace octet {

class MovingAveragePerChannelMinMaxObserver
    : public ObserverOf<MovingAveragePerChannelMinMaxObserver, PerChannelMinMaxObserver,
                        ObserverKind::kMovingAveragePerChannelMinMax> {
 public:
  // Create(options) (ObserverOf) takes: those of PerChannelMinMaxObserver plus averaging_constant (default 0.01, in (0,
  // 1]).

 protected:
  using ObserverOf::ObserverOf;
  void Update(const std::vector<float>& batch_min, const std::vector<float>& batch_max) override;
};

}  // namespace octet
