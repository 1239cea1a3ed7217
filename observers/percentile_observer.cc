// PercentileObserver.
#include "observers/percentile_observer.h"

namespace octet {

Result<QParams> PercentileObserver::CalculateQParams() const {
  if (!has_observations()) return QParamsFor(0.0f, 0.0f);
  const auto& pos = grid_.positive();
  const auto& neg = grid_.negative();
  const int64_t bins = grid_.capacity();
  const double w = grid_.width();
  const double n = static_cast<double>(grid_.total());
  const double p = options().percentile / 100.0;
  if (IsSymmetric(options().qscheme)) {
    const double target = p * n;
    double cum = 0.0;
    double t = static_cast<double>(bins) * w;
    for (int64_t i = 0; i < bins; ++i) {
      cum += static_cast<double>(pos[static_cast<size_t>(i)] + neg[static_cast<size_t>(i)]);
      if (cum >= target) {
        t = static_cast<double>(i + 1) * w;
        break;
      }
    }
    return QParamsFor(static_cast<float>(-t), static_cast<float>(t));
  }
  // Signed order: negative bins from the most negative magnitude down, then the positive bins.
  const double hi_target = p * n;
  const double lo_target = (1.0 - p) * n;
  double lo = -static_cast<double>(bins) * w;
  double hi = static_cast<double>(bins) * w;
  bool lo_found = false;
  double cum = 0.0;
  for (int64_t k = 0; k < 2 * bins; ++k) {
    const bool negative = k < bins;
    const int64_t i = negative ? bins - 1 - k : k - bins;
    cum += static_cast<double>(negative ? neg[static_cast<size_t>(i)] : pos[static_cast<size_t>(i)]);
    if (!lo_found && cum > lo_target) {
      lo = negative ? -static_cast<double>(i + 1) * w : static_cast<double>(i) * w;
      lo_found = true;
    }
    if (cum >= hi_target) {
      hi = negative ? -static_cast<double>(i) * w : static_cast<double>(i + 1) * w;
      if (!lo_found) lo = negative ? -static_cast<double>(i + 1) * w : static_cast<double>(i) * w;
      break;
    }
  }
  return QParamsFor(static_cast<float>(lo), static_cast<float>(hi));
}

}  // namespace octet
