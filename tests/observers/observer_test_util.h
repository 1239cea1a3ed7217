// Helpers shared by the observer tests: building observers, feeding arrays, exact float comparison, and the ISAs
// that have observer kernels.
#pragma once

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/tensor.h"
#include "observers/kernels/histogram.h"
#include "observers/kernels/minmax.h"
#include "observers/observer.h"
#include "observers/observer_factory.h"
#include "tests/test_util.h"

namespace octet::testing {

// "1.25 (0x3fa00000)".
inline std::string FloatText(float v) {
  std::ostringstream s;
  s.precision(9);
  s << v << " (0x" << std::hex << std::bit_cast<uint32_t>(v) << ")";
  return s.str();
}

inline bool SameFloat(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

inline std::unique_ptr<Observer> MakeOrFail(ObserverKind kind, const ObserverOptions& options = {}) {
  auto o = MakeObserver(kind, options);
  if (!o.ok()) FAIL(ObserverKindName(kind) << ": " << o.status().ToString());
  return std::move(o).value();
}

inline Tensor TensorOf(const std::vector<float>& v, Shape shape = {}) {
  if (shape.rank() == 0 && v.size() != 1) shape = Shape{static_cast<int64_t>(v.size())};
  auto t = Tensor::FromValues<float>(shape, v);
  if (!t.ok()) FAIL(t.status().ToString());
  return std::move(t).value();
}

inline void ObserveOrFail(Observer& o, const Tensor& t, std::string_view name = "x") {
  const Status s = o.Observe(t, name);
  if (!s.ok()) FAIL(s.ToString());
}

inline void ObserveOrFail(Observer& o, const std::vector<float>& v, std::string_view name = "x") {
  ObserveOrFail(o, TensorOf(v), name);
}

// The distinct ISAs of the observer kernel lists that this CPU runs (scalar first); the others are recorded as
// skipped.
inline std::vector<Isa> ObserverKernelIsas() {
  std::vector<Isa> out;
  auto add = [&](Isa isa, const char* name) {
    for (Isa i : out) {
      if (i == isa) return;
    }
    if (CanRun(isa, name)) out.push_back(isa);
  };
  add(Isa::kScalar, "scalar");
  for (const auto& k : MinMaxUkernels()) add(k.isa, k.name);
  for (const auto& k : LinearHistogramUkernels()) add(k.isa, k.name);
  for (const auto& k : SignedHistogramUkernels()) add(k.isa, k.name);
  return out;
}

// Floats of assorted magnitudes and signs, with runs of equal values and exact zeros.
inline std::vector<float> AssortedFloats(std::mt19937_64& rng, size_t n) {
  std::vector<float> v(n);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> expo(-8.0f, 8.0f);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng() % 16;
    if (r == 0) {
      v[i] = 0.0f;
    } else if (r == 1 && i > 0) {
      v[i] = v[i - 1];
    } else {
      v[i] = normal(rng) * std::exp2(expo(rng));
    }
  }
  return v;
}

}  // namespace octet::testing
