// The options every `octet bench` command has (--repetitions, --json, --isa, --threads), as a base of each command's
// options, so that they are spelled, checked and turned into timing options once.
#pragma once

#include <CLI/CLI.hpp>

#include "bench/harness/timing.h"
#include "tools/octet/context_options.h"

namespace octet::cli {

struct BenchFlags {
  int repetitions = 5;
  bool json = false;
  ContextFlags context;

  // Registers --repetitions (1 to 1000), --json, and --isa / --threads (default one thread) on `app`.
  void AddTo(CLI::App* app);
  // The timing loop's options for --repetitions.
  bench::TimingOptions TimingOptions() const;
};

}  // namespace octet::cli
