// What `octet bench gemm` and `octet bench conv` share around their operator: the requantization options
// (--scheme, --activation-bits) and their checks, the spot check's verdict, and timing the checked call and printing
// it as one text line or one JSON object.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/harness/spot_check.h"
#include "core/context.h"
#include "core/status.h"
#include "ops/qgemm.h"
#include "tools/octet/bench_flags.h"

namespace octet::cli {

struct KernelBenchFlags : BenchFlags {
  std::string scheme = "fp32";
  int activation_bits = 8;

  // Registers --scheme (described by `scheme_help`) and --activation-bits, then the common bench flags.
  void AddTo(CLI::App* app, const char* scheme_help);
  // The requantization stage --scheme names, or a usage error naming --scheme.
  Result<QGemmStage> Stage() const;
  // Checks --activation-bits and --isa / --threads: a usage message, empty when they are fine.
  std::string UsageError() const;
};

// The verdict on a spot check of `op` (gemm, conv) run by `kernel`: a difference from the reference fails; so does a
// check whose u8 outputs are mostly clamped when `clamping_matters` (it would prove nothing).
Status SpotCheckVerdict(const char* op, const bench::SpotCheck& check, const std::string& kernel,
                        bool clamping_matters);

// One measured kernel: what the report says besides the timing.
struct KernelBenchReport {
  nlohmann::ordered_json problem;  // "op" and the problem's fields, first in the JSON
  nlohmann::ordered_json variant;  // after "kernel" (path, output, scheme), before "activation_bits"
  nlohmann::ordered_json layout;   // fields after the timing, before "enabled_isas"
  std::string text_head;           // the text line up to the thread count ("gemm 4x5x6 -> u8")
  std::string text_path;           // "" or the path taken, printed before the kernel ("indirect")
  double ops = 0;                  // integer operations per call, for "gops"
};

// Times `call` (already checked) with the flags' repetitions and prints the report as text or JSON; the exit code.
int TimeAndPrintKernelBench(const KernelBenchFlags& flags, const Context& context, const std::string& kernel,
                            const KernelBenchReport& report, const std::function<Status()>& call);

}  // namespace octet::cli
