// Seeded data fillers of the benchmarks.
#include "bench/harness/fill.h"

#include <limits>

namespace octet::bench {

void FillQuantizeInputs(std::span<float> x, uint32_t seed) {
  for (float& v : x) v = static_cast<float>(NextXorshift32(seed)) * (14.0f / 4294967296.0f) - 6.5f;
  if (x.size() >= 2) {
    x[0] = std::numeric_limits<float>::infinity();
    x[1] = -std::numeric_limits<float>::infinity();
  }
}

}  // namespace octet::bench
