// The options, spot-check verdict and report that `octet bench gemm` and `octet bench conv` share.
#include "tools/octet/kernel_bench.h"

#include <cstdio>

#include <fmt/format.h>

#include "bench/harness/kernel_isa.h"
#include "bench/harness/peer_problem.h"
#include "bench/harness/timing.h"
#include "tools/octet/command.h"

namespace octet::cli {

void KernelBenchFlags::AddTo(CLI::App* app, const char* scheme_help) {
  app->add_option("--scheme", scheme, scheme_help)->type_name("SCHEME")->capture_default_str();
  app->add_option("--activation-bits", activation_bits,
                  "Activations drawn in [0, 2^bits - 1]: 8 (full u8 range) or "
                  "7 ([0, 127], PyTorch's reduce_range)")
      ->type_name("7|8")
      ->capture_default_str();
  BenchFlags::AddTo(app);
}

Result<QGemmStage> KernelBenchFlags::Stage() const {
  Result<QGemmStage> stage = bench::ParseRequantScheme(scheme);
  if (!stage.ok()) return InvalidArgument("--scheme must be fp32, q31 or fbgemm, got '{}'", scheme);
  return stage;
}

std::string KernelBenchFlags::UsageError() const {
  if (activation_bits != 7 && activation_bits != 8) {
    return fmt::format("--activation-bits must be 7 or 8, got {}", activation_bits);
  }
  if (Status s = context.CheckUsage(); !s.ok()) return s.message();
  return "";
}

Status SpotCheckVerdict(const char* op, const bench::SpotCheck& check, const std::string& kernel,
                        bool clamping_matters) {
  if (!check.mismatch.empty()) {
    return Internal("bench {}: {} differs from the reference at {}", op, kernel, check.mismatch);
  }
  if (clamping_matters && check.MostlyClamped()) {
    return Internal(
        "bench {}: only {} of {} checked outputs are inside (0, "
        "255): the check is not meaningful",
        op, check.inside, check.checked);
  }
  return OkStatus();
}

int TimeAndPrintKernelBench(const KernelBenchFlags& flags, const Context& context, const std::string& kernel,
                            const KernelBenchReport& report, const std::function<Status()>& call) {
  const Result<bench::Timing> timed = bench::MeasureStatusCalls(call, flags.TimingOptions());
  if (!timed.ok()) return ReportFailure(timed.status());
  const bench::Timing& t = *timed;

  const char* isa = bench::KernelIsa(kernel, "scalar");
  const double gops = report.ops / (t.median_us * 1e3);
  if (flags.json) {
    nlohmann::ordered_json j = report.problem;
    j["threads"] = context.threads();
    j["isa"] = isa;
    j["kernel"] = kernel;
    for (const auto& [key, value] : report.variant.items()) j[key] = value;
    j["activation_bits"] = flags.activation_bits;
    bench::AddTimingJson(j, t, "gops", gops);
    for (const auto& [key, value] : report.layout.items()) j[key] = value;
    j["enabled_isas"] = context.enabled_isas().ToString();
    fmt::print("{}\n", j.dump());
  } else {
    const std::string path = report.text_path.empty() ? "" : report.text_path + " path, ";
    fmt::print("{}, {} thread(s), {}{} [{}]: {}, {:.1f} GOPS\n", report.text_head, context.threads(), path, kernel, isa,
               bench::TimingText(t), gops);
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace octet::cli
