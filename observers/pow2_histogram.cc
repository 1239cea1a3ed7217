// Pow2Histogram: counting, growing by pair merges, merging and JSON.
#include "observers/pow2_histogram.h"

#include <cmath>
#include <string>

#include "observers/tensor_scan.h"

namespace octet {

Pow2Histogram::Pow2Histogram(int64_t capacity)
    : capacity_(capacity),
      positive_(static_cast<size_t>(capacity), 0),
      negative_(static_cast<size_t>(capacity), 0) {}

double Pow2Histogram::width() const { return std::ldexp(1.0, exponent_); }

uint64_t Pow2Histogram::total() const {
  uint64_t t = 0;
  for (uint64_t c : positive_) t += c;
  for (uint64_t c : negative_) t += c;
  return t;
}

int Pow2Histogram::ExponentFor(double max_abs, int64_t capacity) {
  int e = std::ilogb(max_abs) - std::ilogb(static_cast<double>(capacity));
  while (std::ldexp(static_cast<double>(capacity), e) <= max_abs) ++e;
  while (std::ldexp(static_cast<double>(capacity), e - 1) > max_abs) --e;
  return e;
}

void Pow2Histogram::GrowTo(int exponent) {
  if (!has_grid_ || exponent <= exponent_) return;
  const int folds = exponent - exponent_;
  for (std::vector<uint64_t>* counts : {&positive_, &negative_}) {
    std::vector<uint64_t> grown(counts->size(), 0);
    for (size_t b = 0; b < counts->size(); ++b) {
      if ((*counts)[b] == 0) continue;
      grown[folds >= 63 ? 0 : (b >> folds)] += (*counts)[b];
    }
    *counts = std::move(grown);
  }
  exponent_ = exponent;
}

void Pow2Histogram::Add(const Context& context, std::span<const float> x, float max_abs) {
  const int needed = max_abs > 0.0f ? ExponentFor(max_abs, capacity_) : kZeroExponent;
  if (!has_grid_) {
    has_grid_ = true;
    exponent_ = needed;
  } else if (needed > exponent_) {
    GrowTo(needed);
  }
  // A grid that has only seen zeros counts them in bin 0 whatever its exponent; the kernels need a float scale.
  const int e = exponent_ == kZeroExponent ? 0 : exponent_;
  const std::vector<uint64_t> counts = SignedPow2Histogram(context, x, e, capacity_);
  for (int64_t b = 0; b < capacity_; ++b) {
    positive_[static_cast<size_t>(b)] += counts[static_cast<size_t>(b)];
    negative_[static_cast<size_t>(b)] += counts[static_cast<size_t>(capacity_ + b)];
  }
}

void Pow2Histogram::Merge(const Pow2Histogram& other) {
  if (!other.has_grid_) return;
  if (!has_grid_) {
    *this = other;
    return;
  }
  const int e = exponent_ > other.exponent_ ? exponent_ : other.exponent_;
  GrowTo(e);
  Pow2Histogram o = other;
  o.GrowTo(e);
  for (size_t b = 0; b < positive_.size(); ++b) {
    positive_[b] += o.positive_[b];
    negative_[b] += o.negative_[b];
  }
}

void Pow2Histogram::Reset() {
  has_grid_ = false;
  exponent_ = kZeroExponent;
  positive_.assign(static_cast<size_t>(capacity_), 0);
  negative_.assign(static_cast<size_t>(capacity_), 0);
}

nlohmann::json Pow2Histogram::ToJson() const {
  nlohmann::json j;
  j["exponent"] = has_grid_ ? nlohmann::json(exponent_) : nlohmann::json(nullptr);
  for (const auto& [key, counts] : {std::pair{"positive", &positive_}, std::pair{"negative", &negative_}}) {
    nlohmann::json list = nlohmann::json::array();
    for (size_t b = 0; b < counts->size(); ++b) {
      if ((*counts)[b] != 0) list.push_back({b, (*counts)[b]});
    }
    j[key] = std::move(list);
  }
  return j;
}

Status Pow2Histogram::FromJson(const nlohmann::json& j, std::string_view what) {
  Reset();
  if (!j.is_object() || !j.contains("exponent") || !j.contains("positive") || !j.contains("negative")) {
    return InvalidArgument("failed to load {}: the grid needs exponent, positive and negative", what);
  }
  const nlohmann::json& e = j["exponent"];
  if (e.is_null()) {
    if (!j["positive"].empty() || !j["negative"].empty()) {
      return InvalidArgument("failed to load {}: counts without a grid exponent", what);
    }
    return OkStatus();
  }
  if (!e.is_number_integer() || e.get<int64_t>() < kZeroExponent || e.get<int64_t>() > 200) {
    return InvalidArgument("failed to load {}: the grid exponent must be an integer in [{}, 200]", what,
                           kZeroExponent);
  }
  has_grid_ = true;
  exponent_ = static_cast<int>(e.get<int64_t>());
  for (const auto& [key, counts] : {std::pair{"positive", &positive_}, std::pair{"negative", &negative_}}) {
    const nlohmann::json& list = j[key];
    if (!list.is_array()) return InvalidArgument("failed to load {}: '{}' must be a list", what, key);
    for (const nlohmann::json& pair : list) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() || !pair[1].is_number_unsigned() ||
          pair[0].get<uint64_t>() >= static_cast<uint64_t>(capacity_)) {
        Reset();
        return InvalidArgument("failed to load {}: '{}' must hold [bin, count] pairs with bin < {}", what, key,
                               capacity_);
      }
      (*counts)[pair[0].get<size_t>()] += pair[1].get<uint64_t>();
    }
  }
  return OkStatus();
}

}  // namespace octet
