// octet's Catch2 runner: prints the random seed of every run (so a failure can be replayed with --rng-seed N) and
// how many ISA variants were skipped because this machine cannot run them.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/test_util.h"

int main(int argc, char** argv) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  // Catch2 2.13 defaults to seed 0 (a fixed seed); octet tests want a fresh one per run unless one is given.
  bool seed_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rng-seed" || a.rfind("--rng-seed=", 0) == 0) seed_given = true;
  }
  if (!seed_given) {
    const auto now = std::chrono::high_resolution_clock::now().time_since_epoch().count();
    session.configData().rngSeed = static_cast<unsigned int>(now ^ (now >> 32)) | 1u;
  }
  std::printf("octet tests: random seed %u (replay with --rng-seed %u)\n", session.configData().rngSeed,
              session.configData().rngSeed);
  std::fflush(stdout);
  const int rc = session.run();
  const auto skipped = octet::testing::SkippedVariants();
  if (!skipped.empty()) {
    std::printf("octet tests: %zu variant(s) SKIPPED, not counted as passed:\n", skipped.size());
    for (const auto& s : skipped) std::printf("  skipped: %s\n", s.c_str());
  }
  return rc;
}
