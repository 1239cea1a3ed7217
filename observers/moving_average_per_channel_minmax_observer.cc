// MovingAveragePerChannelMinMaxObserver.
#include "observers/moving_average_per_channel_minmax_observer.h"

namespace octet {

void MovingAveragePerChannelMinMaxObserver::Update(const std::vector<float>& batch_min,
                                                   const std::vector<float>& batch_max) {
  if (min_.empty()) {
    min_ = batch_min;
    max_ = batch_max;
    return;
  }
  const float k = options().averaging_constant;
  for (size_t c = 0; c < min_.size(); ++c) {
    if (!(batch_min[c] <= batch_max[c])) continue;  // no finite value in this batch
    if (!(min_[c] <= max_[c])) {                     // none before: take the batch's range
      min_[c] = batch_min[c];
      max_[c] = batch_max[c];
      continue;
    }
    min_[c] = min_[c] + k * (batch_min[c] - min_[c]);
    max_[c] = max_[c] + k * (batch_max[c] - max_[c]);
  }
}

}  // namespace octet
