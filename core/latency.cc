// Latency clocks and the median.
#include "core/latency.h"

#include <time.h>

#include <algorithm>
#include <chrono>

namespace octet {

int64_t NowNs(LatencyClock clock) {
  if (clock == LatencyClock::kWall) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + static_cast<int64_t>(t.tv_nsec);
}

double MedianUs(std::vector<double> samples_us) {
  if (samples_us.empty()) return 0.0;
  const auto middle = samples_us.begin() + static_cast<std::ptrdiff_t>(samples_us.size() / 2);
  std::nth_element(samples_us.begin(), middle, samples_us.end());
  return *middle;
}

}  // namespace octet
