// What the Google Benchmark programs of bench/ share beside the harness library: the --shapes=FILE argument, a skip for
// kernels whose ISA this CPU lacks, the reference check before timing, and the reference-mismatch flag that makes a
// program exit 1. Header only: just
// those programs link Google Benchmark.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/cpu_features.h"
#include "core/isa.h"
#include "core/status.h"

namespace octet::bench {

// Set once any benchmark differs from the reference; main() then returns 1.
inline bool g_mismatch = false;

// Marks the benchmark as an error naming what differs, and remembers it for the exit status.
inline void ReportMismatch(benchmark::State& state, const char* program, const std::string& what) {
  g_mismatch = true;
  fmt::print(stderr, "{}: {}\n", program, what);
  state.SkipWithError(what.c_str());
}

// Times `run` (one Status-returning call of the kernel under test) in the benchmark loop, unless the output it already
// computed differs from the reference: `mismatch` names the first differing element ("" when none), and a mismatch is
// reported (ReportMismatch, naming `kernel`) instead of timed. Returns whether it timed.
template <typename Run>
bool TimeCheckedKernel(benchmark::State& state, const char* program, const std::string& kernel,
                       const std::string& mismatch, Run run) {
  if (!mismatch.empty()) {
    ReportMismatch(state, program, fmt::format("{} differs from the reference at {}", kernel, mismatch));
    return false;
  }
  for (auto _ : state) {
    const Status s = run();
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  return true;
}

// False (and the benchmark marked as skipped) when this CPU cannot run `isa`.
inline bool SkipUnlessDetected(benchmark::State& state, Isa isa) {
  if (DetectedIsas().Contains(isa)) return true;
  const std::string why = fmt::format("skipped: ISA {} is not available on this CPU (detected: {})", IsaName(isa),
                                      DetectedIsas().ToString());
  state.SkipWithError(why.c_str());
  return false;
}

// Takes --shapes=FILE out of argv (default `shapes_path`), then hands the rest to Google Benchmark; returns false after
// printing its complaint when an argument is not Google Benchmark's.
inline bool InitializeWithShapes(int argc, char** argv, std::string& shapes_path) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--shapes=", 0) == 0) {
      shapes_path = a.substr(9);
    } else {
      args.push_back(argv[i]);
    }
  }
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  return !benchmark::ReportUnrecognizedArguments(args_count, args.data());
}

// The value of a harness result, or the program's name and the error on stderr and exit status 2 (bad input).
template <typename T>
T ValueOrExit(Result<T> result, const char* program) {
  if (!result.ok()) {
    fmt::print(stderr, "{}: {}\n", program, result.status().message());
    std::exit(2);
  }
  return *std::move(result);
}

// The ISA tiers to benchmark a problem of `ops` integer operations on: every detected tier, but scalar only up to
// `scalar_max_ops` (the scalar kernels would take minutes on large problems).
inline std::vector<Isa> TiersFor(double ops, double scalar_max_ops) {
  std::vector<Isa> tiers;
  for (Isa tier : DetectedIsas().ToVector()) {
    if (tier != Isa::kScalar || ops <= scalar_max_ops) tiers.push_back(tier);
  }
  return tiers;
}

// Registers `fn` as benchmark `name`, timed in real time and reported in microseconds like every kernel benchmark.
template <typename Fn>
void RegisterKernelBenchmark(const std::string& name, Fn fn) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Unit(benchmark::kMicrosecond);
}

// Runs the registered benchmarks; the exit status of main().
inline int RunRegisteredBenchmarks() {
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_mismatch ? 1 : 0;
}

}  // namespace octet::bench
