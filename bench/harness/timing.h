// The timing loop of `octet bench` (bench/ programs use Google Benchmark's): warm-up, calls per repetition calibrated
// to a minimum duration, median.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

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

// MeasureCalls of a call that can fail: after the first error no more calls are made and that error is returned.
Result<Timing> MeasureStatusCalls(const std::function<Status()>& fn, const TimingOptions& options);

// "12.3 us median of 5 (min 12.0, max 13.1)": the timing in `octet bench`'s text lines.
std::string TimingText(const Timing& t);

// The timing in `octet bench`'s JSON lines, in this order: "us", `rate_key` (= `rate`, e.g. "gops"), "us_min",
// "us_max", "repetitions", "calls_per_repetition" (../shared/peers/compare reads "us" and the rate).
void AddTimingJson(nlohmann::ordered_json& j, const Timing& t, const char* rate_key, double rate);

}  // namespace octet::bench
