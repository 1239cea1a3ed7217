// MinMaxObserver.
#include "observers/minmax_observer.h"

#include <cmath>

#include "observers/state_json.h"

namespace octet {

Result<QParams> MinMaxObserver::CalculateQParams() const {
  const float lo[1] = {min_};
  const float hi[1] = {max_};
  return CalculateQParamsFromRange(lo, hi, options().Spec());
}

Status MinMaxObserver::ObserveImpl(const Tensor& x, std::string_view name) {
  const RangeScan scan = ScanRange(context(), x.values<float>());
  OCTET_RETURN_IF_ERROR(ApplyNonFinitePolicy(scan.nonfinite, x, name));
  if (scan.min <= scan.max) Update(scan.min, scan.max);
  return OkStatus();
}

void MinMaxObserver::Update(float batch_min, float batch_max) {
  min_ = batch_min < min_ ? batch_min : min_;
  max_ = batch_max > max_ ? batch_max : max_;
}

Status MinMaxObserver::MergeImpl(const Observer& other) {
  const auto& o = static_cast<const MinMaxObserver&>(other);
  if (o.has_observations()) Update(o.min_, o.max_);
  return OkStatus();
}

void MinMaxObserver::ResetImpl() {
  min_ = std::numeric_limits<float>::infinity();
  max_ = -std::numeric_limits<float>::infinity();
}

nlohmann::json MinMaxObserver::SaveStateImpl() const {
  nlohmann::json j;
  j["min_val"] = FloatToJson(min_);
  j["max_val"] = FloatToJson(max_);
  return j;
}

Status MinMaxObserver::LoadStateImpl(const nlohmann::json& state) {
  const std::string what = fmt::format("{} state", ObserverClassName(kind()));
  OCTET_ASSIGN_OR_RETURN(const float lo, ReadJsonFloat(state, "min_val", what));
  OCTET_ASSIGN_OR_RETURN(const float hi, ReadJsonFloat(state, "max_val", what));
  const bool unset = lo == std::numeric_limits<float>::infinity() && hi == -std::numeric_limits<float>::infinity();
  if (!unset && !(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) {
    return InvalidArgument("failed to load {}: need finite min_val <= max_val (or inf and -inf before any "
                           "observation), got {} and {}",
                           what, lo, hi);
  }
  min_ = lo;
  max_ = hi;
  return OkStatus();
}

}  // namespace octet
