// Error metrics of the numeric suite (see metrics.h for the formulas).
#include "numeric_suite/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace octet {
namespace {

Status CheckComparable(const Tensor& x, const Tensor& y) {
  if (x.dtype() != DType::kF32 || y.dtype() != DType::kF32) {
    return InvalidArgument("failed to compare tensors: both must be f32, got {} and {}", DTypeName(x.dtype()),
                           DTypeName(y.dtype()));
  }
  if (x.shape() != y.shape()) {
    return InvalidArgument("failed to compare tensors: shapes differ, got {} and {}", x.shape(), y.shape());
  }
  return OkStatus();
}

}  // namespace

Status ErrorSums::Accumulate(const Tensor& x, const Tensor& y) {
  OCTET_RETURN_IF_ERROR(CheckComparable(x, y));
  const float* xs = x.data<float>();
  const float* ys = y.data<float>();
  const int64_t n = x.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    const double a = xs[i];
    const double b = ys[i];
    const double d = a - b;
    sum_x2 += a * a;
    sum_y2 += b * b;
    sum_xy += a * b;
    sum_err2 += d * d;
    max_abs_err = std::max(max_abs_err, std::abs(d));
  }
  count += n;
  return OkStatus();
}

double ErrorSums::Sqnr() const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (sum_err2 == 0) return kInf;
  if (sum_x2 == 0) return -kInf;
  // 20 log10(sqrt(a) / sqrt(b)) == 10 log10(a / b).
  return 10.0 * std::log10(sum_x2 / sum_err2);
}

double ErrorSums::NormalizedL2() const {
  if (sum_err2 == 0) return 0.0;
  if (sum_x2 == 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(sum_err2 / sum_x2);
}

double ErrorSums::CosineSimilarity() const {
  if (sum_x2 == 0 && sum_y2 == 0) return 1.0;
  if (sum_x2 == 0 || sum_y2 == 0) return 0.0;
  return sum_xy / (std::sqrt(sum_x2) * std::sqrt(sum_y2));
}

Result<double> Sqnr(const Tensor& x, const Tensor& y) {
  ErrorSums sums;
  OCTET_RETURN_IF_ERROR(sums.Accumulate(x, y));
  return sums.Sqnr();
}

Result<double> NormalizedL2(const Tensor& x, const Tensor& y) {
  ErrorSums sums;
  OCTET_RETURN_IF_ERROR(sums.Accumulate(x, y));
  return sums.NormalizedL2();
}

Result<double> CosineSimilarity(const Tensor& x, const Tensor& y) {
  ErrorSums sums;
  OCTET_RETURN_IF_ERROR(sums.Accumulate(x, y));
  return sums.CosineSimilarity();
}

Result<double> MaxAbsErrorLsb(const Tensor& x, const Tensor& y, double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    return InvalidArgument("failed to compute max abs error in LSB: scale must be positive and finite, got {}", scale);
  }
  ErrorSums sums;
  OCTET_RETURN_IF_ERROR(sums.Accumulate(x, y));
  return sums.max_abs_err / scale;
}

}  // namespace octet
