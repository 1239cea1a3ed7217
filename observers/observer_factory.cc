// MakeObserver and ObserverFromState.
#include "observers/observer_factory.h"

#include "observers/entropy_observer.h"
#include "observers/histogram_observer.h"
#include "observers/minmax_observer.h"
#include "observers/moving_average_minmax_observer.h"
#include "observers/moving_average_per_channel_minmax_observer.h"
#include "observers/mse_observer.h"
#include "observers/per_channel_minmax_observer.h"
#include "observers/percentile_observer.h"
#include "observers/placeholder_observer.h"
#include "observers/pow2_histogram_observer.h"

namespace octet {
namespace {

template <typename T>
Result<std::unique_ptr<Observer>> Make(const ObserverOptions& options) {
  OCTET_ASSIGN_OR_RETURN(std::unique_ptr<T> o, T::Create(options));
  return std::unique_ptr<Observer>(std::move(o));
}

}  // namespace

Result<std::unique_ptr<Observer>> MakeObserver(ObserverKind kind, const ObserverOptions& options) {
  switch (kind) {
    case ObserverKind::kMinMax: return Make<MinMaxObserver>(options);
    case ObserverKind::kMovingAverageMinMax: return Make<MovingAverageMinMaxObserver>(options);
    case ObserverKind::kPerChannelMinMax: return Make<PerChannelMinMaxObserver>(options);
    case ObserverKind::kMovingAveragePerChannelMinMax: return Make<MovingAveragePerChannelMinMaxObserver>(options);
    case ObserverKind::kPlaceholder: return Make<PlaceholderObserver>(options);
    case ObserverKind::kHistogram: return Make<HistogramObserver>(options);
    case ObserverKind::kPercentile: return Make<PercentileObserver>(options);
    case ObserverKind::kEntropy: return Make<EntropyObserver>(options);
    case ObserverKind::kMse: return Make<MseObserver>(options);
    case ObserverKind::kPow2Histogram: return Make<Pow2HistogramObserver>(options);
  }
  return InvalidArgument("failed to create observer: unknown kind {}", static_cast<int>(kind));
}

Result<std::unique_ptr<Observer>> MakeObserver(std::string_view name, const ObserverOptions& options) {
  OCTET_ASSIGN_OR_RETURN(const ObserverKind kind, ParseObserverKind(name));
  return MakeObserver(kind, options);
}

Result<std::unique_ptr<Observer>> ObserverFromState(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("observer") || !state["observer"].is_string() ||
      !state.contains("options")) {
    return InvalidArgument("failed to load observer state: expected an object with \"observer\" and \"options\"");
  }
  OCTET_ASSIGN_OR_RETURN(const ObserverKind kind, ParseObserverKind(state["observer"].get<std::string>()));
  OCTET_ASSIGN_OR_RETURN(const ObserverOptions options, OptionsFromJson(state["options"]));
  OCTET_ASSIGN_OR_RETURN(std::unique_ptr<Observer> observer, MakeObserver(kind, options));
  OCTET_RETURN_IF_ERROR(observer->LoadState(state));
  return observer;
}

}  // namespace octet
