// MseObserver: the two-pass shrink search.
#include "observers/mse_observer.h"

#include <cmath>
#include <limits>

#include "observers/qparams_math.h"

namespace octet {

double MseObserver::ExpectedError(double a) const {
  if (!has_observations()) return 0.0;
  const QParamsSpec spec = options().Spec();
  const ScaleZeroPoint sz = CalculateScaleZeroPoint(static_cast<float>(a * min_), static_cast<float>(a * max_), spec);
  const float inv_scale = 1.0f / sz.scale;
  const double qmin = static_cast<double>(spec.range.quant_min);
  const double qmax = static_cast<double>(spec.range.quant_max);
  const double zp = static_cast<double>(sz.zero_point);
  const double w = grid_.width();
  const auto& pos = grid_.positive();
  const auto& neg = grid_.negative();
  double err = 0.0;
  for (int sign = 0; sign < 2; ++sign) {
    const auto& counts = sign == 0 ? pos : neg;
    for (size_t b = 0; b < counts.size(); ++b) {
      if (counts[b] == 0) continue;
      double c = (static_cast<double>(b) + 0.5) * w * (sign == 0 ? 1.0 : -1.0);
      c = c < min_ ? min_ : (c > max_ ? max_ : c);
      const float cf = static_cast<float>(c);
      double q = zp + static_cast<double>(std::nearbyint(cf * inv_scale));
      q = q < qmin ? qmin : (q > qmax ? qmax : q);
      const double fq = static_cast<double>(static_cast<float>(q - zp) * sz.scale);
      const double d = fq - static_cast<double>(cf);
      err += static_cast<double>(counts[b]) * d * d;
    }
  }
  return err / static_cast<double>(grid_.total());
}

double MseObserver::Shrink() const {
  if (!has_observations()) return 1.0;
  double best_a = 1.0;
  double best = ExpectedError(1.0);
  auto consider = [&](double a) {
    if (!(a > 0.0) || a > 1.0) return;
    const double e = ExpectedError(a);
    if (e < best || (e == best && a > best_a)) {
      best = e;
      best_a = a;
    }
  };
  for (int k = 99; k >= 1; --k) consider(k / 100.0);
  const double center = best_a;
  for (int k = -100; k <= 100; ++k) consider(center + k * 1e-4);
  return best_a;
}

Result<QParams> MseObserver::CalculateQParams() const {
  if (!has_observations()) return QParamsFor(0.0f, 0.0f);
  const double a = Shrink();
  return QParamsFor(static_cast<float>(a * min_), static_cast<float>(a * max_));
}

}  // namespace octet
