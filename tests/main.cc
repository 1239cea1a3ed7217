// octet's Catch2 runner: prints the random seed of every run (so a failure can be replayed with --rng-seed N) and
// how many ISA variants were skipped because this machine cannot run them. With OCTET_ISA_SUMMARY=FILE it also
// appends one line per ISA to FILE, "<isa> <kernel cases run> <compiled 0|1> <runnable 0|1>", which
// scripts/run_all_tests.sh sums over the ctest entries into its per-tier summary.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/isa.h"
#include "tests/test_util.h"

namespace {

// Appends the per-ISA lines in one write (O_APPEND): ctest runs several of these processes at once on one file.
void AppendIsaSummary(const char* path) {
  const std::vector<int64_t> counts = octet::testing::IsaCaseCounts();
  std::string text;
  for (octet::Isa isa : octet::kAllIsas) {
    text += std::string(octet::IsaName(isa)) + " " + std::to_string(counts[static_cast<size_t>(isa)]) + " " +
            (octet::CompiledIsas().Contains(isa) ? "1" : "0") + " " +
            (octet::DetectedIsas().Contains(isa) ? "1" : "0") + "\n";
  }
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  const ssize_t written = write(fd, text.data(), text.size());
  (void)written;
  close(fd);
}

}  // namespace

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
  if (const char* path = std::getenv("OCTET_ISA_SUMMARY"); path != nullptr && *path != '\0') AppendIsaSummary(path);
  const auto skipped = octet::testing::SkippedVariants();
  if (!skipped.empty()) {
    std::printf("octet tests: %zu variant(s) SKIPPED, not counted as passed:\n", skipped.size());
    for (const auto& s : skipped) std::printf("  skipped: %s\n", s.c_str());
  }
  return rc;
}
