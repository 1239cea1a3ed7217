// PlaceholderObserver: marks a tensor for dynamic quantization (PyTorch's PlaceholderObserver). It carries the
// dtype / qscheme / range options for the run-time quantizer and has no static qparams: CalculateQParams fails, as
// PyTorch's raises. It still records the range it sees (min_val / max_val), which reports and `octet observe` show.
#pragma once

#include "observers/minmax_observer.h"

namespace octet {

class PlaceholderObserver : public MinMaxObserver {
 public:
  // Options: dtype, qscheme (per-tensor), reduce_range, quant_min/quant_max, eps, skip_non_finite.
  static Result<std::unique_ptr<PlaceholderObserver>> Create(const ObserverOptions& options = {});

  // Always FailedPrecondition: dynamic quantization computes qparams per input.
  Result<QParams> CalculateQParams() const override;
  std::unique_ptr<Observer> Clone() const override;

 protected:
  explicit PlaceholderObserver(ResolvedObserverOptions options) : MinMaxObserver(std::move(options)) {}
};

}  // namespace octet
