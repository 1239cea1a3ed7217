// `octet`: the command line of the octet quantization engine (DESIGN.md §8). Exit status 0 on success, 1 on a
// runtime error (message on stderr naming the file and the cause), 2 on bad usage.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/octet/bench_command.h"
#include "tools/octet/calibrate_command.h"
#include "tools/octet/command.h"
#include "tools/octet/compare_command.h"
#include "tools/octet/conv_bench_command.h"
#include "tools/octet/demo_command.h"
#include "tools/octet/gemm_bench_command.h"
#include "tools/octet/merge_command.h"
#include "tools/octet/model_bench_command.h"
#include "tools/octet/model_command.h"
#include "tools/octet/observe_command.h"
#include "tools/octet/qat_command.h"
#include "tools/octet/quantize_command.h"
#include "tools/octet/sensitivity_command.h"
#include "tools/octet/tensor_command.h"
#include "tools/octet/train_command.h"
#include "tools/octet/vectors_command.h"
#include "tools/octet/version_command.h"

int main(int argc, char** argv) {
  using namespace octet::cli;
  CLI::App app("octet: an int8 quantization engine", "octet");
  bool version = false;
  bool verbose = false;
  app.add_flag("--version", version, "Print the version, build and ISA information and exit");
  app.add_flag("-v,--verbose", verbose, "With --version: also the kernel each quantize/dequantize family selects");
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Draw no progress lines on stderr (they are drawn only when it is a terminal)");
  // --quiet is accepted after the command name too (`octet quantize ... --quiet`): sub-apps made from here on let
  // options they do not know fall through to this one.
  app.fallthrough();

  CommandRegistry registry;
  AddTensorCommands(app, registry);
  AddBenchCommands(app, registry);
  AddGemmBenchCommand(app, registry);
  AddConvBenchCommand(app, registry);
  AddObserveCommand(app, registry);
  AddModelCommands(app, registry);
  AddQuantizeCommand(app, registry);
  AddCalibrateCommand(app, registry);
  AddMergeCommand(app, registry);
  AddSensitivityCommand(app, registry);
  AddModelBenchCommand(app, registry);  // after AddBenchCommands: it joins `bench`
  AddTrainCommand(app, registry);
  AddDemoCommand(app, registry);
  AddCompareCommand(app, registry);
  AddVectorsCommand(app, registry);
  AddQatCommand(app, registry);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help (and CLI11's other "errors" with status 0) print through CLI11; every real parse error is usage.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return ReportUsage(e.what());
  }

  try {
    SetQuiet(quiet);
    if (version) return PrintVersion(verbose);
    const int rc = registry.RunParsed();
    if (rc >= 0) return rc;
    fmt::print(stderr, "{}", app.help());
    return kExitUsage;
  } catch (const std::exception& e) {
    return ReportFailure(fmt::format("internal error: {}", e.what()));
  }
}
