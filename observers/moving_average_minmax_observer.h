// MovingAverageMinMaxObserver: an exponential moving average of each batch's minimum and maximum (PyTorch's
// MovingAverageMinMaxObserver, numerics.md §2.5): the first batch sets the range, then, in float32,
//   min_val = min_val + c * (batch_min - min_val),  max_val = max_val + c * (batch_max - max_val).
//
// Order matters by definition: the average weights recent batches more, so a different batching or order gives a
// different range. Merge(other) therefore treats the other observer's range as one more batch observed after this
// observer's (taken directly when this one has seen nothing). That equals one observer over the same batches
// exactly when `other` saw a single batch; in general the merged range depends on the merge order.
#pragma once

#include "observers/minmax_observer.h"
#include "observers/observer_of.h"

namespace octet {

class MovingAverageMinMaxObserver
    : public ObserverOf<MovingAverageMinMaxObserver, MinMaxObserver, ObserverKind::kMovingAverageMinMax> {
 public:
  // Create(options) (ObserverOf) takes: those of MinMaxObserver plus averaging_constant (default 0.01, in (0, 1]).

 protected:
  using ObserverOf::ObserverOf;
  void Update(float batch_min, float batch_max) override;
};

}  // namespace octet
