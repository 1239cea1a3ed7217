// The timing loop of `octet bench` (bench/ programs use Google Benchmark's): warm-up, calls per repetition calibrated
// to a minimum duration, median.
#pragma once

#include <cstdint>
#include <functional>

namespace octet::bench {

struct TimingOptions {
  double warmup_s = 0.020;      // keep calling for at least this long before measuring (>= 1 call)
  double repetition_s = 0.010;  // each repetition makes enough calls to last at least this long
  int repetitions = 5;
};

struct Timing {
  double median_us = 0.0;  // per call, median over the repetitions
  double min_us = 0.0;
  double max_us = 0.0;
  int repetitions = 0;
  int64_t calls_per_repetition = 0;
};

// Times `fn` (steady clock): warm-up, then `repetitions` repetitions of the calibrated number of calls.
Timing MeasureCalls(const std::function<void()>& fn, const TimingOptions& options);

}  // namespace octet::bench
