// Latency helpers (core/latency.h): the median octet reports and the timed-run loop. No timing is asserted: only
// which samples the median picks and how many calls are made.
#include <catch2/catch.hpp>

#include <vector>

#include "core/latency.h"

namespace octet {
namespace {

TEST_CASE("MedianUs is the middle sample, the upper middle one of an even count", "[core]") {
  CHECK(MedianUs({}) == 0.0);
  CHECK(MedianUs({7.0}) == 7.0);
  CHECK(MedianUs({9.0, 1.0, 5.0}) == 5.0);
  CHECK(MedianUs({4.0, 1.0, 3.0, 2.0}) == 3.0);
}

TEST_CASE("MedianRunUs makes the warm-up and timed calls and returns the first error", "[core]") {
  for (LatencyClock clock : {LatencyClock::kWall, LatencyClock::kThreadCpu}) {
    int calls = 0;
    const Result<double> us = MedianRunUs(clock, 2, 5, [&] {
      ++calls;
      return OkStatus();
    });
    REQUIRE(us.ok());
    CHECK(*us >= 0.0);
    CHECK(calls == 7);
    const int64_t start = NowNs(clock);
    CHECK(NowNs(clock) >= start);
    CHECK(MicrosecondsSince(clock, start) >= 0.0);
  }
  int calls = 0;
  const Result<double> failed =
      MedianRunUs(LatencyClock::kWall, 1, 5, [&] { return ++calls == 3 ? InvalidArgument("third call") : OkStatus(); });
  CHECK(failed.status().message() == "third call");
  CHECK(calls == 3);
}

}  // namespace
}  // namespace octet
