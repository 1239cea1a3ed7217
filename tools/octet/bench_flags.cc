// The options every `octet bench` command has.
#include "tools/octet/bench_flags.h"

namespace octet::cli {

void BenchFlags::AddTo(CLI::App* app) {
  app->add_option("--repetitions", repetitions, "Timed repetitions; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->type_name("R")
      ->capture_default_str();
  app->add_flag("--json", json, "Print one JSON object per line");
  context.AddTo(app, /*default_threads=*/1);
}

bench::TimingOptions BenchFlags::TimingOptions() const {
  bench::TimingOptions options;
  options.repetitions = repetitions;
  return options;
}

}  // namespace octet::cli
