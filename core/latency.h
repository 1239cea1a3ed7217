// Latency figures: the two clocks octet measures with and the median it reports. The calling thread's CPU time is
// what a one-thread figure on a shared machine should use (other processes taking the cores do not count); wall time
// is what a user waits.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/status.h"

namespace octet {

enum class LatencyClock {
  kWall,       // steady clock
  kThreadCpu,  // the calling thread's CPU time (with one thread, every node runs on it)
};

// Nanoseconds on `clock` since an arbitrary origin: differences of two readings are durations. (Integers: a double
// of microseconds since boot would blur the last digits of every difference.)
int64_t NowNs(LatencyClock clock);

// Microseconds from `start_ns` (a NowNs reading) to now.
inline double MicrosecondsSince(LatencyClock clock, int64_t start_ns) {
  return static_cast<double>(NowNs(clock) - start_ns) / 1e3;
}

// The median of `samples_us` (the upper middle one of an even count, as every octet figure has reported it);
// 0 for no samples.
double MedianUs(std::vector<double> samples_us);

// Calls `run` (returning Status) `warmups` times untimed, then `runs` times timed on `clock`; the median duration of
// one call. The first error of `run` is returned.
template <typename Fn>
Result<double> MedianRunUs(LatencyClock clock, int warmups, int runs, Fn&& run) {
  for (int w = 0; w < warmups; ++w) OCTET_RETURN_IF_ERROR(run());
  std::vector<double> samples;
  for (int r = 0; r < runs; ++r) {
    const int64_t start = NowNs(clock);
    OCTET_RETURN_IF_ERROR(run());
    samples.push_back(MicrosecondsSince(clock, start));
  }
  return MedianUs(std::move(samples));
}

}  // namespace octet
