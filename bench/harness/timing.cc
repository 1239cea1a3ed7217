// The timing loop of `octet bench`.
#include "bench/harness/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace octet::bench {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

Timing MeasureCalls(const std::function<void()>& fn, const TimingOptions& options) {
  // Warm-up: caches, TLB, page tables, the thread pool and the CPU clock settle; the fastest call calibrates.
  const Clock::time_point warmup_start = Clock::now();
  double fastest_s = 0.0;
  do {
    const Clock::time_point t = Clock::now();
    fn();
    const double s = SecondsSince(t);
    fastest_s = fastest_s == 0.0 ? s : std::min(fastest_s, s);
  } while (SecondsSince(warmup_start) < options.warmup_s);

  const double calls = std::ceil(options.repetition_s / std::max(fastest_s, 1e-9));
  Timing timing;
  timing.calls_per_repetition = static_cast<int64_t>(std::clamp(calls, 1.0, 1e7));
  std::vector<double> per_call_us;
  for (int r = 0; r < std::max(1, options.repetitions); ++r) {
    const Clock::time_point t = Clock::now();
    for (int64_t i = 0; i < timing.calls_per_repetition; ++i) fn();
    per_call_us.push_back(SecondsSince(t) * 1e6 / static_cast<double>(timing.calls_per_repetition));
  }
  std::sort(per_call_us.begin(), per_call_us.end());
  const size_t n = per_call_us.size();
  timing.median_us = n % 2 == 1 ? per_call_us[n / 2] : 0.5 * (per_call_us[n / 2 - 1] + per_call_us[n / 2]);
  timing.min_us = per_call_us.front();
  timing.max_us = per_call_us.back();
  timing.repetitions = static_cast<int>(n);
  return timing;
}

Result<Timing> MeasureStatusCalls(const std::function<Status()>& fn, const TimingOptions& options) {
  Status status;
  const Timing timing = MeasureCalls(
      [&] {
        if (status.ok()) status = fn();
      },
      options);
  OCTET_RETURN_IF_ERROR(status);
  return timing;
}

std::string TimingText(const Timing& t) {
  return fmt::format("{:.1f} us median of {} (min {:.1f}, max {:.1f})", t.median_us, t.repetitions, t.min_us, t.max_us);
}

void AddTimingJson(nlohmann::ordered_json& j, const Timing& t, const char* rate_key, double rate) {
  j["us"] = t.median_us;
  j[rate_key] = rate;
  j["us_min"] = t.min_us;
  j["us_max"] = t.max_us;
  j["repetitions"] = t.repetitions;
  j["calls_per_repetition"] = t.calls_per_repetition;
}

}  // namespace octet::bench
