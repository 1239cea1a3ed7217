// MovingAverageMinMaxObserver.
#include "observers/moving_average_minmax_observer.h"

namespace octet {

Result<std::unique_ptr<MovingAverageMinMaxObserver>> MovingAverageMinMaxObserver::Create(
    const ObserverOptions& options) {
  OCTET_ASSIGN_OR_RETURN(ResolvedObserverOptions resolved,
                         ResolveObserverOptions(ObserverKind::kMovingAverageMinMax, options));
  return std::unique_ptr<MovingAverageMinMaxObserver>(new MovingAverageMinMaxObserver(std::move(resolved)));
}

std::unique_ptr<Observer> MovingAverageMinMaxObserver::Clone() const {
  std::unique_ptr<MovingAverageMinMaxObserver> c(new MovingAverageMinMaxObserver(options()));
  c->CopyBaseFrom(*this);
  c->min_ = min_;
  c->max_ = max_;
  return c;
}

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
