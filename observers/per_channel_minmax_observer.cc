// PerChannelMinMaxObserver.
#include "observers/per_channel_minmax_observer.h"

#include <cmath>

#include "observers/state_json.h"

namespace octet {

Result<QParams> PerChannelMinMaxObserver::CalculateQParams() const {
  const int axis = axis_ >= 0 ? axis_ : (options().ch_axis >= 0 ? options().ch_axis : 0);
  for (size_t c = 0; c < min_.size(); ++c) {
    if (!(min_[c] <= max_[c])) {
      return FailedPrecondition("failed to calculate qparams of {}: channel {} has not seen a finite value",
                                ObserverClassName(kind()), c);
    }
  }
  return CalculateQParamsFromRange(min_, max_, options().Spec(axis));
}

Status PerChannelMinMaxObserver::ObserveImpl(const Tensor& x, std::string_view name) {
  const int rank = x.shape().rank();
  const char* cls = ObserverClassName(kind());
  if (rank == 0) {
    return InvalidArgument("failed to observe tensor '{}' with {}: a per-channel observer needs rank >= 1, got a "
                           "scalar",
                           name, cls);
  }
  const int ch_axis = options().ch_axis;
  const int axis = ch_axis < 0 ? ch_axis + rank : ch_axis;
  if (axis < 0 || axis >= rank) {
    return InvalidArgument("failed to observe tensor '{}' of shape {} with {}: ch_axis {} is out of range for rank {}",
                           name, x.shape(), cls, ch_axis, rank);
  }
  const int64_t channels = x.shape().dim(axis);
  if (has_observations() && (axis != axis_ || static_cast<size_t>(channels) != min_.size())) {
    return InvalidArgument(
        "failed to observe tensor '{}' of shape {} with {}: it has {} channels along axis {}, earlier tensors had {} "
        "along axis {}",
        name, x.shape(), cls, channels, axis, min_.size(), axis_);
  }
  const ChannelRangeScan scan = ScanChannelRanges(context(), x.values<float>(), x.shape(), axis);
  OCTET_RETURN_IF_ERROR(ApplyNonFinitePolicy(scan.nonfinite, x, name));
  axis_ = axis;
  Update(scan.min, scan.max);
  return OkStatus();
}

void PerChannelMinMaxObserver::Update(const std::vector<float>& batch_min, const std::vector<float>& batch_max) {
  if (min_.empty()) {
    min_ = batch_min;
    max_ = batch_max;
    return;
  }
  for (size_t c = 0; c < min_.size(); ++c) {
    min_[c] = batch_min[c] < min_[c] ? batch_min[c] : min_[c];
    max_[c] = batch_max[c] > max_[c] ? batch_max[c] : max_[c];
  }
}

Status PerChannelMinMaxObserver::MergeImpl(const Observer& other) {
  const auto& o = static_cast<const PerChannelMinMaxObserver&>(other);
  if (!o.has_observations()) return OkStatus();
  if (has_observations() && (o.axis_ != axis_ || o.min_.size() != min_.size())) {
    return InvalidArgument("failed to merge {} observers: {} channels along axis {} vs {} along axis {}",
                           ObserverClassName(kind()), min_.size(), axis_, o.min_.size(), o.axis_);
  }
  axis_ = o.axis_;
  Update(o.min_, o.max_);
  return OkStatus();
}

void PerChannelMinMaxObserver::ResetImpl() {
  min_.clear();
  max_.clear();
  axis_ = -1;
}

nlohmann::json PerChannelMinMaxObserver::SaveStateImpl() const {
  nlohmann::json j;
  j["axis"] = axis_;
  j["min_val"] = FloatsToJson(min_);
  j["max_val"] = FloatsToJson(max_);
  return j;
}

Status PerChannelMinMaxObserver::LoadStateImpl(const nlohmann::json& state) {
  const std::string what = fmt::format("{} state", ObserverClassName(kind()));
  OCTET_ASSIGN_OR_RETURN(const int64_t axis, ReadJsonInt(state, "axis", what));
  OCTET_ASSIGN_OR_RETURN(std::vector<float> lo, ReadJsonFloats(state, "min_val", what));
  OCTET_ASSIGN_OR_RETURN(std::vector<float> hi, ReadJsonFloats(state, "max_val", what));
  if (lo.size() != hi.size()) {
    return InvalidArgument("failed to load {}: {} minimums and {} maximums", what, lo.size(), hi.size());
  }
  if (lo.empty() != (axis < 0) || axis >= 64 || axis < -1) {
    return InvalidArgument("failed to load {}: axis {} does not fit {} channels", what, axis, lo.size());
  }
  for (size_t c = 0; c < lo.size(); ++c) {
    const bool unset = std::isinf(lo[c]) && lo[c] > 0 && std::isinf(hi[c]) && hi[c] < 0;
    if (!unset && !(std::isfinite(lo[c]) && std::isfinite(hi[c]) && lo[c] <= hi[c])) {
      return InvalidArgument("failed to load {}: channel {} needs finite min_val <= max_val, got {} and {}", what, c,
                             lo[c], hi[c]);
    }
  }
  min_ = std::move(lo);
  max_ = std::move(hi);
  axis_ = static_cast<int>(axis);
  return OkStatus();
}

}  // namespace octet
