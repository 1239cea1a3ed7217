// Shared test helpers: seeded random generators, the ISAs a test can run, and visible skips.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/isa.h"

namespace octet::testing {

// The runner's seed (printed at start) mixed with `salt`, so each test has its own reproducible stream.
std::mt19937_64 MakeRng(std::string_view salt);

// Records a variant the machine cannot run; main() lists them at the end. Also WARNs inside the current test.
void Skip(const std::string& what);
std::vector<std::string> SkippedVariants();

// A context enabling exactly `isa` (and scalar), with `threads` threads, ignoring OCTET_ISA.
Context ContextFor(Isa isa, int threads = 1);

// True if `isa` can run here (and counts one kernel case for it); otherwise records a skip for `what` and returns
// false.
bool CanRun(Isa isa, std::string_view what);
// Kernel cases counted by CanRun, per ISA (index: the Isa's value).
std::vector<int64_t> IsaCaseCounts();

// Sizes leaning small and to tile edges: TFLite's ExponentialRandomPositiveInt idea.
size_t RandomSize(std::mt19937_64& rng, size_t max);

// Every ISA compiled into this build (whether it can run or not), scalar first.
std::vector<Isa> CompiledIsaList();

}  // namespace octet::testing
