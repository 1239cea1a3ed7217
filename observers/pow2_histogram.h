// Pow2Histogram: exact counts of signed values on a grid whose bin width is a power of two, the summary behind the
// percentile, entropy and MSE calibrators.
//
// Magnitude bin m = floor(|x| / 2^exponent), kept separately for values with the sign bit clear (positive, zeros)
// and set (negative). The exponent is the smallest one for which every magnitude seen fits the `capacity` bins, so
// the largest magnitude lands in the upper half and at least capacity / 2 bins span [0, max |x|]. When a larger
// magnitude arrives the width doubles and bins merge in pairs: floor(floor(a) / 2) = floor(a / 2), so counts stay
// exact. The histogram is therefore a pure function of the multiset of values seen: batching, sharding and merge
// order cannot change it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/status.h"

namespace octet {

class Pow2Histogram {
 public:
  // `capacity` bins per sign (>= 2, even).
  explicit Pow2Histogram(int64_t capacity);

  // Counts the finite values of x (NaN and ±Inf are not counted); max_abs is the largest finite |x| (0 allowed).
  void Add(const Context& context, std::span<const float> x, float max_abs);
  void Merge(const Pow2Histogram& other);
  void Reset();

  bool empty() const { return !has_grid_; }
  int64_t capacity() const { return capacity_; }
  // Bin width 2^exponent (meaningful when not empty).
  int exponent() const { return exponent_; }
  double width() const;
  const std::vector<uint64_t>& positive() const { return positive_; }
  const std::vector<uint64_t>& negative() const { return negative_; }
  uint64_t total() const;

  // {"exponent": e or null, "positive": [[bin, count], ...], "negative": [...]} (non-zero bins only), and back.
  nlohmann::json ToJson() const;
  Status FromJson(const nlohmann::json& json, std::string_view what);

  // The smallest exponent e with max_abs < capacity * 2^e (max_abs > 0, finite).
  static int ExponentFor(double max_abs, int64_t capacity);
  // The exponent of a grid that has only seen zeros; any larger one replaces it.
  static constexpr int kZeroExponent = -400;

 private:
  void GrowTo(int exponent);

  int64_t capacity_;
  bool has_grid_ = false;
  int exponent_ = kZeroExponent;
  std::vector<uint64_t> positive_;
  std::vector<uint64_t> negative_;
};

}  // namespace octet
