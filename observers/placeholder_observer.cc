// PlaceholderObserver.
#include "observers/placeholder_observer.h"

namespace octet {

Result<QParams> PlaceholderObserver::CalculateQParams() const {
  return FailedPrecondition(
      "failed to calculate qparams of PlaceholderObserver: it marks a tensor for dynamic quantization, whose qparams "
      "are computed from each input at run time");
}

}  // namespace octet
