// HistogramCalibrator: observation, merge and state shared by the percentile, entropy and MSE observers.
#include "observers/histogram_calibrator.h"

#include <cmath>

#include "observers/state_json.h"

namespace octet {

Status HistogramCalibrator::ObserveImpl(const Tensor& x, std::string_view name) {
  const RangeScan scan = ScanRange(context(), x.values<float>());
  OCTET_RETURN_IF_ERROR(ApplyNonFinitePolicy(scan.nonfinite, x, name));
  if (!(scan.min <= scan.max)) return OkStatus();
  const float max_abs = -scan.min > scan.max ? -scan.min : scan.max;
  grid_.Add(context(), x.values<float>(), max_abs);
  min_ = scan.min < min_ ? scan.min : min_;
  max_ = scan.max > max_ ? scan.max : max_;
  return OkStatus();
}

Status HistogramCalibrator::MergeImpl(const Observer& other) {
  const auto& o = static_cast<const HistogramCalibrator&>(other);
  grid_.Merge(o.grid_);
  min_ = o.min_ < min_ ? o.min_ : min_;
  max_ = o.max_ > max_ ? o.max_ : max_;
  return OkStatus();
}

void HistogramCalibrator::ResetImpl() {
  grid_.Reset();
  min_ = std::numeric_limits<float>::infinity();
  max_ = -std::numeric_limits<float>::infinity();
}

nlohmann::json HistogramCalibrator::SaveStateImpl() const {
  nlohmann::json j;
  j["min_val"] = FloatToJson(min_);
  j["max_val"] = FloatToJson(max_);
  j["grid"] = grid_.ToJson();
  return j;
}

Status HistogramCalibrator::LoadStateImpl(const nlohmann::json& state) {
  const std::string what = fmt::format("{} state", ObserverClassName(kind()));
  OCTET_ASSIGN_OR_RETURN(const float lo, ReadJsonFloat(state, "min_val", what));
  OCTET_ASSIGN_OR_RETURN(const float hi, ReadJsonFloat(state, "max_val", what));
  const bool unset = lo == std::numeric_limits<float>::infinity() && hi == -std::numeric_limits<float>::infinity();
  if (!unset && !(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) {
    return InvalidArgument("failed to load {}: need finite min_val <= max_val, got {} and {}", what, lo, hi);
  }
  if (!state.contains("grid")) return InvalidArgument("failed to load {}: missing 'grid'", what);
  OCTET_RETURN_IF_ERROR(grid_.FromJson(state["grid"], what));
  if (unset != grid_.empty() || (!unset && grid_.total() == 0)) {
    grid_.Reset();
    return InvalidArgument("failed to load {}: the range and the histogram disagree about what was observed", what);
  }
  if (!unset) {
    const double max_abs = std::fmax(-static_cast<double>(lo), static_cast<double>(hi));
    const int want = max_abs > 0.0 ? Pow2Histogram::ExponentFor(max_abs, grid_.capacity())
                                   : Pow2Histogram::kZeroExponent;
    if (grid_.exponent() != want) {
      grid_.Reset();
      return InvalidArgument("failed to load {}: the grid exponent {} does not fit the range [{}, {}]", what,
                             grid_.exponent(), lo, hi);
    }
  }
  min_ = lo;
  max_ = hi;
  return OkStatus();
}

Result<QParams> HistogramCalibrator::QParamsFor(float lo, float hi) const {
  if (!has_observations()) {
    const float a[1] = {std::numeric_limits<float>::infinity()}, b[1] = {-std::numeric_limits<float>::infinity()};
    return CalculateQParamsFromRange(a, b, options().Spec());
  }
  lo = lo < min_ ? min_ : lo;
  hi = hi > max_ ? max_ : hi;
  if (lo > hi) lo = hi;
  const float a[1] = {lo}, b[1] = {hi};
  return CalculateQParamsFromRange(a, b, options().Spec());
}

}  // namespace octet
