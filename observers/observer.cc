// The Observer base: input checks, the non-finite policy, merge compatibility and the JSON envelope.
#include "observers/observer.h"

#include <cmath>

#include "core/cpu_features.h"
#include "observers/state_json.h"

namespace octet {

const Context& DefaultObserverContext() {
  static const Context context = [] {
    auto c = Context::Create();
    return c.ok() ? std::move(c).value() : Context::ForIsas(DetectedIsas(), 1);
  }();
  return context;
}

Status Observer::Observe(const Tensor& x, std::string_view name) {
  if (x.dtype() != DType::kF32) {
    return InvalidArgument("failed to observe tensor '{}' with {}: dtype must be f32, got {}", name,
                           ObserverClassName(kind()), x.dtype());
  }
  if (x.empty()) return OkStatus();
  OCTET_RETURN_IF_ERROR(ObserveImpl(x, name));
  ++num_batches_;
  return OkStatus();
}

Status Observer::ApplyNonFinitePolicy(const NonFiniteStats& stats, const Tensor& x, std::string_view name,
                                      bool allow_inf) {
  if (stats.count() == 0) return OkStatus();
  const bool reject = !options_.skip_non_finite && (stats.num_nan > 0 || (!allow_inf && stats.num_inf > 0));
  if (reject) {
    const float v = stats.first_value;
    return InvalidArgument(
        "failed to observe tensor '{}' of shape {} with {}: element {} is {} ({} NaN and {} infinite values in "
        "all); observers reject non-finite input unless skip_non_finite is set",
        name, x.shape(), ObserverClassName(kind()), stats.first_index,
        std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf"), stats.num_nan, stats.num_inf);
  }
  num_skipped_ += stats.count();
  return OkStatus();
}

Status Observer::Merge(const Observer& other) {
  if (other.kind() != kind()) {
    return InvalidArgument("failed to merge {} into {}: observers of different kinds cannot merge",
                           ObserverClassName(other.kind()), ObserverClassName(kind()));
  }
  if (!(other.options() == options())) {
    const nlohmann::json mine = OptionsToJson(options());
    const nlohmann::json theirs = OptionsToJson(other.options());
    std::string diff;
    for (const auto& [key, value] : mine.items()) {
      const auto it = theirs.find(key);
      if (it == theirs.end() || *it != value) {
        diff += fmt::format("{}{} {} vs {}", diff.empty() ? "" : "; ", key, value.dump(),
                            it == theirs.end() ? std::string("(unset)") : it->dump());
      }
    }
    for (const auto& [key, value] : theirs.items()) {
      if (!mine.contains(key)) diff += fmt::format("{}{} (unset) vs {}", diff.empty() ? "" : "; ", key, value.dump());
    }
    return InvalidArgument("failed to merge {} observers: their options differ ({})", ObserverClassName(kind()),
                           diff);
  }
  if (&other == this) {
    const std::unique_ptr<Observer> copy = Clone();
    return Merge(*copy);
  }
  OCTET_RETURN_IF_ERROR(MergeImpl(other));
  num_batches_ += other.num_batches_;
  num_skipped_ += other.num_skipped_;
  return OkStatus();
}

void Observer::Reset() {
  ResetImpl();
  num_batches_ = 0;
  num_skipped_ = 0;
}

nlohmann::json Observer::SaveState() const {
  nlohmann::json j;
  j["observer"] = ObserverKindName(kind());
  j["format_version"] = 1;
  j["options"] = OptionsToJson(options_);
  nlohmann::json state = SaveStateImpl();
  state["num_batches"] = num_batches_;
  state["num_skipped"] = num_skipped_;
  j["state"] = std::move(state);
  return j;
}

Status Observer::LoadState(const nlohmann::json& json) {
  const char* cls = ObserverClassName(kind());
  if (!json.is_object()) return InvalidArgument("failed to load {} state: expected a JSON object", cls);
  const auto observer = json.find("observer");
  if (observer == json.end() || !observer->is_string()) {
    return InvalidArgument("failed to load {} state: missing \"observer\"", cls);
  }
  OCTET_ASSIGN_OR_RETURN(const ObserverKind saved_kind, ParseObserverKind(observer->get<std::string>()));
  if (saved_kind != kind()) {
    return InvalidArgument("failed to load {} state: the state is of a {}", cls, ObserverClassName(saved_kind));
  }
  const auto version = json.find("format_version");
  if (version == json.end() || !version->is_number_integer() || version->get<int64_t>() != 1) {
    return InvalidArgument("failed to load {} state: format_version must be 1", cls);
  }
  const auto options = json.find("options");
  if (options == json.end()) return InvalidArgument("failed to load {} state: missing \"options\"", cls);
  OCTET_ASSIGN_OR_RETURN(const ObserverOptions saved_options, OptionsFromJson(*options));
  auto resolved = ResolveObserverOptions(kind(), saved_options);
  if (!resolved.ok()) return resolved.status().WithContext(fmt::format("failed to load {} state", cls));
  if (!(*resolved == options_)) {
    return InvalidArgument("failed to load {} state: its options {} differ from this observer's {}", cls,
                           OptionsToJson(*resolved).dump(), OptionsToJson(options_).dump());
  }
  const auto state = json.find("state");
  if (state == json.end() || !state->is_object()) {
    return InvalidArgument("failed to load {} state: missing \"state\"", cls);
  }
  const std::string what = fmt::format("{} state", cls);
  OCTET_ASSIGN_OR_RETURN(const int64_t batches, ReadJsonInt(*state, "num_batches", what));
  OCTET_ASSIGN_OR_RETURN(const int64_t skipped, ReadJsonInt(*state, "num_skipped", what));
  if (batches < 0 || skipped < 0) {
    return InvalidArgument("failed to load {}: num_batches and num_skipped must be >= 0", what);
  }
  Reset();
  if (Status s = LoadStateImpl(*state); !s.ok()) {
    Reset();
    return s;
  }
  num_batches_ = batches;
  num_skipped_ = skipped;
  return OkStatus();
}

}  // namespace octet
