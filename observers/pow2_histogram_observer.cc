// Pow2HistogramObserver.
#include "observers/pow2_histogram_observer.h"

#include <cmath>
#include <vector>

#include "observers/histogram_search.h"

namespace octet {

Result<QParams> Pow2HistogramObserver::CalculateQParams() const {
  if (!has_observations()) return QParamsFor(0.0f, 0.0f);
  const auto& pos = grid_.positive();
  const auto& neg = grid_.negative();
  auto occupied = [](const std::vector<uint64_t>& bins) {
    size_t n = bins.size();
    while (n > 0 && bins[n - 1] == 0) --n;
    return n;
  };
  const size_t n_neg = occupied(neg);
  const size_t n_pos = occupied(pos);
  const double w = grid_.width();
  const float lo = static_cast<float>(-static_cast<double>(n_neg) * w);
  const float hi = static_cast<float>(static_cast<double>(n_pos) * w);
  // Only zeros, or a grid finer than float32 can express: the observed range is the answer.
  if (n_neg + n_pos < 2 || !(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) return QParamsFor(min_, max_);
  std::vector<float> histogram;
  histogram.reserve(n_neg + n_pos);
  for (size_t i = n_neg; i > 0; --i) histogram.push_back(static_cast<float>(neg[i - 1]));
  for (size_t i = 0; i < n_pos; ++i) histogram.push_back(static_cast<float>(pos[i]));
  const double dst_nbins = std::ldexp(1.0, 8 * static_cast<int>(DTypeSize(options().dtype)));
  const HistogramRange r = NonLinearParamSearch(histogram, lo, hi, dst_nbins);
  return QParamsFor(r.min, r.max);
}

}  // namespace octet
