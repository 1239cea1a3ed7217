// ObserverOf<Derived, Base, kind>: what every concrete observer has in the same form, written once: Create (the
// options resolved for its kind) and Clone (a copy of the whole state: options, counters, context and the
// subclass's members). A concrete observer derives from ObserverOf<Itself, Observer or its state base, its kind>
// and writes only its numbers (observe, merge, state, CalculateQParams).
#pragma once

#include <memory>
#include <utility>

#include "observers/observer.h"

namespace octet {

template <typename Derived, typename Base, ObserverKind kKind>
class ObserverOf : public Base {
 public:
  static Result<std::unique_ptr<Derived>> Create(const ObserverOptions& options = {}) {
    OCTET_ASSIGN_OR_RETURN(ResolvedObserverOptions resolved, ResolveObserverOptions(kKind, options));
    return std::unique_ptr<Derived>(new Made(std::move(resolved)));
  }

  std::unique_ptr<Observer> Clone() const override {
    return std::unique_ptr<Observer>(new Made(static_cast<const Derived&>(*this)));
  }

 protected:
  explicit ObserverOf(ResolvedObserverOptions options) : Base(std::move(options)) {}
  ObserverOf(const ObserverOf&) = default;

 private:
  // Derived's constructors stay protected (only Create makes one from options); this leaf may call them.
  struct Made;
};

template <typename Derived, typename Base, ObserverKind kKind>
struct ObserverOf<Derived, Base, kKind>::Made final : Derived {
  explicit Made(ResolvedObserverOptions options) : Derived(std::move(options)) {}
  explicit Made(const Derived& other) : Derived(other) {}
};

}  // namespace octet
