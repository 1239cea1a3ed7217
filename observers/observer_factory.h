// Building observers by name (for the `octet observe` command, qconfigs and saved state).
#pragma once

#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "observers/observer.h"
#include "observers/observer_options.h"

namespace octet {

// The observer of `kind` with `options` (validated; see observer_options.h for what applies to which kind).
Result<std::unique_ptr<Observer>> MakeObserver(ObserverKind kind, const ObserverOptions& options = {});
// `name` is a command-line name ("minmax", "histogram", ...) or a class name ("MinMaxObserver", ...).
Result<std::unique_ptr<Observer>> MakeObserver(std::string_view name, const ObserverOptions& options = {});
// The observer that Observer::SaveState() described, with its state loaded.
Result<std::unique_ptr<Observer>> ObserverFromState(const nlohmann::json& state);

}  // namespace octet
