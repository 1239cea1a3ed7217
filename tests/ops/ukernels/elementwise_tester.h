// Input generators shared by the element-wise kernel testers: awkward floats (ties after scaling, NaN, ±Inf,
// huge, denormal, -0) mixed into random data, and random qparams with non-trivial zero points.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace octet::testing {

// A scale that is not a power of two most of the time, from 1e-6 to 1e3.
inline float RandomScale(std::mt19937_64& rng) {
  static const float kAwkward[] = {0.0123f, 1e-3f, 3.7f, 0.1f / 3.0f, 1.0f, 0.5f, 2.0f / 255.0f, 1e-6f, 1000.0f};
  if (rng() % 3 == 0) return kAwkward[rng() % (sizeof(kAwkward) / sizeof(kAwkward[0]))];
  std::uniform_real_distribution<float> e(-6.0f, 3.0f);
  return std::pow(10.0f, e(rng));
}

// n inputs for a quantizer with `scale` and `zero_point`: mostly normal values spanning the quant range and a bit
// beyond, plus exact ties (k + 0.5) * scale, special values and clamp-edge values.
inline std::vector<float> AwkwardFloats(std::mt19937_64& rng, size_t n, float scale, int64_t quant_min,
                                        int64_t quant_max, bool with_non_finite) {
  std::vector<float> x(n);
  const double span = static_cast<double>(quant_max - quant_min);
  std::normal_distribution<double> normal(0.0, std::min(span, 1e6) * 0.3);
  std::uniform_int_distribution<int> kind(0, 19);
  for (size_t i = 0; i < n; ++i) {
    switch (kind(rng)) {
      case 0: x[i] = (static_cast<float>(static_cast<int64_t>(rng() % 600) - 300) + 0.5f) * scale; break;
      case 1: x[i] = static_cast<float>(quant_max - quant_min) * scale * ((rng() & 1) ? 1.0f : -1.0f); break;
      case 2: x[i] = (rng() & 1) ? 1e30f : -1e30f; break;
      case 3: x[i] = (rng() & 1) ? -0.0f : std::numeric_limits<float>::denorm_min(); break;
      case 4:
        if (with_non_finite) {
          const int w = static_cast<int>(rng() % 3);
          x[i] = w == 0 ? std::numeric_limits<float>::quiet_NaN()
                        : (w == 1 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
          break;
        }
        [[fallthrough]];
      default: x[i] = static_cast<float>(normal(rng)) * scale; break;
    }
  }
  return x;
}

// A quant range: the dtype's full range most of the time, else a narrower one (4-bit, 7-bit, asymmetric).
inline void RandomQuantRange(std::mt19937_64& rng, int64_t dtype_min, int64_t dtype_max, int32_t* quant_min,
                             int32_t* quant_max) {
  *quant_min = static_cast<int32_t>(dtype_min);
  *quant_max = static_cast<int32_t>(dtype_max);
  if (rng() % 3 != 0) return;
  const int64_t span = dtype_max - dtype_min;
  const int64_t width = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(std::min<int64_t>(span, 255)));
  const int64_t start = dtype_min + static_cast<int64_t>(rng() % static_cast<uint64_t>(span - width + 1));
  *quant_min = static_cast<int32_t>(start);
  *quant_max = static_cast<int32_t>(start + width);
}

inline int32_t RandomZeroPoint(std::mt19937_64& rng, int32_t quant_min, int32_t quant_max) {
  const uint64_t width = static_cast<uint64_t>(int64_t{quant_max} - quant_min) + 1;
  if (rng() % 4 == 0) return (rng() & 1) ? quant_min : quant_max;  // the ends of the range
  return static_cast<int32_t>(quant_min + static_cast<int64_t>(rng() % width));
}

}  // namespace octet::testing
