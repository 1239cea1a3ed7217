// EntropyObserver: the KL threshold search.
#include "observers/entropy_observer.h"

#include <cmath>
#include <limits>
#include <vector>

namespace octet {

double EntropyObserver::Threshold() const {
  if (!has_observations()) return 0.0;
  const double w = grid_.width();
  const double amax = std::fmax(-static_cast<double>(min_), static_cast<double>(max_));
  const int64_t levels_range = options().range.quant_max - options().range.quant_min + 1;
  const bool unsigned_data = !IsSymmetric(options().qscheme) && min_ >= 0.0f;
  const int64_t levels = unsigned_data ? levels_range : levels_range / 2;
  // |x| counts up to the last non-empty bin.
  const auto& pos = grid_.positive();
  const auto& neg = grid_.negative();
  std::vector<double> h;
  for (size_t b = 0; b < pos.size(); ++b) h.push_back(static_cast<double>(pos[b] + neg[b]));
  while (!h.empty() && h.back() == 0.0) h.pop_back();
  const int64_t n = static_cast<int64_t>(h.size());
  if (n < levels || levels < 1) return amax;
  if (n > 1) h[0] = h[1];  // NVIDIA: suppress the zero spike
  // Prefix sums over [0, j): counts, non-empty bins, and h log h.
  std::vector<double> cum(static_cast<size_t>(n + 1), 0.0), nz(static_cast<size_t>(n + 1), 0.0),
      hlogh(static_cast<size_t>(n + 1), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const double v = h[static_cast<size_t>(j)];
    cum[static_cast<size_t>(j + 1)] = cum[static_cast<size_t>(j)] + v;
    nz[static_cast<size_t>(j + 1)] = nz[static_cast<size_t>(j)] + (v > 0.0 ? 1.0 : 0.0);
    hlogh[static_cast<size_t>(j + 1)] = hlogh[static_cast<size_t>(j)] + (v > 0.0 ? v * std::log(v) : 0.0);
  }
  const double total = cum[static_cast<size_t>(n)];
  double best = std::numeric_limits<double>::infinity();
  int64_t best_i = n;
  for (int64_t i = levels; i <= n; ++i) {
    const double s = cum[static_cast<size_t>(i)];          // |Q| before normalising: the mass below i
    const double outliers = total - s;
    const double last = h[static_cast<size_t>(i - 1)];
    double kl = std::numeric_limits<double>::infinity();
    if (s > 0.0 && !(last == 0.0 && outliers > 0.0)) {
      // sum P log P: the bins below i - 1, then the last bin with the outliers.
      const double tail = last + outliers;
      const double plogp = hlogh[static_cast<size_t>(i - 1)] + (tail > 0.0 ? tail * std::log(tail) : 0.0);
      // sum P log Q over the groups; the outliers sit in bin i - 1 with that bin's Q.
      double plogq = 0.0;
      double q_last = 0.0;
      for (int64_t g = 0; g < levels; ++g) {
        const int64_t lo = (g * i + levels - 1) / levels;
        const int64_t hi = ((g + 1) * i + levels - 1) / levels;
        const double sg = cum[static_cast<size_t>(hi)] - cum[static_cast<size_t>(lo)];
        const double ng = nz[static_cast<size_t>(hi)] - nz[static_cast<size_t>(lo)];
        if (ng > 0.0 && sg > 0.0) {
          plogq += sg * std::log(sg / ng);
          if (hi == i) q_last = sg / ng;
        }
      }
      if (outliers > 0.0) plogq += outliers * std::log(q_last);
      kl = (plogp - plogq) / total - std::log(total) + std::log(s);
    }
    if (kl <= best) {
      best = kl;
      best_i = i;
    }
  }
  return static_cast<double>(best_i) * w;
}

Result<QParams> EntropyObserver::CalculateQParams() const {
  if (!has_observations()) return QParamsFor(0.0f, 0.0f);
  const float t = static_cast<float>(Threshold());
  if (!IsSymmetric(options().qscheme) && min_ >= 0.0f) return QParamsFor(min_, t);
  return QParamsFor(-t, t);
}

}  // namespace octet
