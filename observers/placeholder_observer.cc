// PlaceholderObserver.
#include "observers/placeholder_observer.h"

namespace octet {

Result<std::unique_ptr<PlaceholderObserver>> PlaceholderObserver::Create(const ObserverOptions& options) {
  OCTET_ASSIGN_OR_RETURN(ResolvedObserverOptions resolved,
                         ResolveObserverOptions(ObserverKind::kPlaceholder, options));
  return std::unique_ptr<PlaceholderObserver>(new PlaceholderObserver(std::move(resolved)));
}

Result<QParams> PlaceholderObserver::CalculateQParams() const {
  return FailedPrecondition(
      "failed to calculate qparams of PlaceholderObserver: it marks a tensor for dynamic quantization, whose qparams "
      "are computed from each input at run time");
}

std::unique_ptr<Observer> PlaceholderObserver::Clone() const {
  std::unique_ptr<PlaceholderObserver> c(new PlaceholderObserver(options()));
  c->CopyBaseFrom(*this);
  c->min_ = min_;
  c->max_ = max_;
  return c;
}

}  // namespace octet
