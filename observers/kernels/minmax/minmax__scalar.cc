// Scalar min/max kernel, the reference of the family: four independent accumulator pairs (so the loop is not one
// long dependency chain), a NaN test per element, and ±Inf found from the final range.
#include <cmath>
#include <limits>

#include "observers/kernels/minmax.h"

namespace octet {

MinMaxResult minmax_f32_ukernel__scalar(size_t n, const float* x) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float mn[4] = {kInf, kInf, kInf, kInf};
  float mx[4] = {-kInf, -kInf, -kInf, -kInf};
  bool nan = false;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (size_t k = 0; k < 4; ++k) {
      const float v = x[i + k];
      mn[k] = v < mn[k] ? v : mn[k];
      mx[k] = v > mx[k] ? v : mx[k];
      nan |= v != v;
    }
  }
  for (; i < n; ++i) {
    const float v = x[i];
    mn[0] = v < mn[0] ? v : mn[0];
    mx[0] = v > mx[0] ? v : mx[0];
    nan |= v != v;
  }
  MinMaxResult r{mn[0], mx[0], false};
  for (size_t k = 1; k < 4; ++k) {
    r.min = mn[k] < r.min ? mn[k] : r.min;
    r.max = mx[k] > r.max ? mx[k] : r.max;
  }
  r.nonfinite = nan || r.min == -kInf || r.max == kInf;
  return r;
}

}  // namespace octet
