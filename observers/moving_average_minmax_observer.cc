// MovingAverageMinMaxObserver.
#include "observers/moving_average_minmax_observer.h"

namespace octet {

void MovingAverageMinMaxObserver::Update(float batch_min, float batch_max) {
  if (!has_observations()) {
    min_ = batch_min;
    max_ = batch_max;
    return;
  }
  // Each operation rounds to float32 (no FMA: -ffp-contract=off), as PyTorch's tensor arithmetic does.
  const float c = options().averaging_constant;
  min_ = min_ + c * (batch_min - min_);
  max_ = max_ + c * (batch_max - max_);
}

}  // namespace octet
