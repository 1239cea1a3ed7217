// PlaceholderObserver: marks a tensor for dynamic quantization (PyTorch's PlaceholderObserver). It carries the
// dtype / qscheme / range options for the run-time quantizer and has no static qparams: CalculateQParams fails, as
// PyTorch's raises. It still records the range it sees (min_val / max_val), which reports and `octet observe` show.
#pragma once

#include "observers/minmax_observer.h"
#include "observers/observer_of.h"

namespace octet {

class PlaceholderObserver : public ObserverOf<PlaceholderObserver, MinMaxObserver, ObserverKind::kPlaceholder> {
 public:
  // Create(options) (ObserverOf) takes: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max, eps,
  // skip_non_finite.

  // Always FailedPrecondition: dynamic quantization computes qparams per input.
  Result<QParams> CalculateQParams() const override;

 protected:
  using ObserverOf::ObserverOf;
};

}  // namespace octet
