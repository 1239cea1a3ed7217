// `octet bench gemm`.
#include "tools/octet/gemm_bench_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness/kernel_isa.h"
#include "bench/harness/peer_problem.h"
#include "bench/harness/spot_check.h"
#include "bench/harness/timing.h"
#include "core/context.h"
#include "core/tensor.h"
#include "ops/qgemm.h"
#include "tools/octet/bench_flags.h"

namespace octet::cli {
namespace {

constexpr int64_t kMaxGemmDim = int64_t{1} << 20;

struct GemmBenchCommand : BenchFlags {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::string output = "u8";
  std::string scheme = "fp32";
  int activation_bits = 8;
};

// Every output of small problems, else 300 samples and the four corners; u8 outputs must not be mostly clamped (a
// check that proves nothing otherwise).
Status Check(const bench::GemmProblem& p, const Tensor& y, const std::string& kernel) {
  OCTET_ASSIGN_OR_RETURN(const bench::SpotCheck check, bench::CheckGemm(p, y));
  if (!check.mismatch.empty()) {
    return Internal("bench gemm: {} differs from the reference at {}", kernel, check.mismatch);
  }
  if (y.dtype() == DType::kU8 && check.MostlyClamped()) {
    return Internal("bench gemm: only {} of {} checked outputs are inside (0, 255): the check is not meaningful",
                    check.inside, check.checked);
  }
  return OkStatus();
}

int RunGemmBench(const GemmBenchCommand& c) {
  if (c.m < 1 || c.n < 1 || c.k < 1 || c.m > kMaxGemmDim || c.n > kMaxGemmDim || c.k > kMaxGemmDim) {
    return ReportUsage(fmt::format("--m, --n and --k must be in [1, {}], got {}, {}, {}", kMaxGemmDim, c.m, c.n, c.k));
  }
  if (c.output != "u8" && c.output != "int32") {
    return ReportUsage(fmt::format("--output must be u8 or int32, got '{}'", c.output));
  }
  Result<QGemmStage> stage = c.output == "u8" ? bench::ParseRequantScheme(c.scheme) : QGemmStage::kS32;
  if (!stage.ok()) return ReportUsage(fmt::format("--scheme must be fp32, q31 or fbgemm, got '{}'", c.scheme));
  if (c.activation_bits != 7 && c.activation_bits != 8) {
    return ReportUsage(fmt::format("--activation-bits must be 7 or 8, got {}", c.activation_bits));
  }
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());

  bench::GemmProblemOptions problem_options;
  problem_options.stage = *stage;
  problem_options.activation_bits = c.activation_bits;
  Result<bench::GemmProblem> problem = bench::MakeGemmProblem({c.m, c.n, c.k}, problem_options);
  if (!problem.ok()) return ReportFailure(problem.status());
  Result<PackedWeights> packed = PackedWeights::Prepack(*context, problem->w);
  if (!packed.ok()) return ReportFailure(packed.status());
  Result<QGemmPlan> plan = QGemmPlan::Create(*packed, problem->a.qparams(), problem->output);
  if (!plan.ok()) return ReportFailure(plan.status());
  Result<Tensor> y = Tensor::Create(plan->output_dtype(), Shape{c.m, c.n});
  if (!y.ok()) return ReportFailure(y.status());
  Tensor& out = *y;
  const Tensor& a = problem->a.values();
  if (Status s = plan->RunInto(*context, a, out); !s.ok()) return ReportFailure(s);
  const std::string kernel = context->LastKernel("qgemm");
  if (Status s = Check(*problem, out, kernel); !s.ok()) return ReportFailure(s);

  const Result<bench::Timing> timed =
      bench::MeasureStatusCalls([&] { return plan->RunInto(*context, a, out); }, c.TimingOptions());
  if (!timed.ok()) return ReportFailure(timed.status());
  const bench::Timing& t = *timed;

  const char* isa = bench::KernelIsa(kernel, "scalar");
  const double gops = bench::GemmOps({c.m, c.n, c.k}) / (t.median_us * 1e3);
  if (c.json) {
    nlohmann::ordered_json j;
    j["op"] = "gemm";
    j["m"] = c.m;
    j["n"] = c.n;
    j["k"] = c.k;
    j["threads"] = context->threads();
    j["isa"] = isa;
    j["kernel"] = kernel;
    j["output"] = c.output;
    if (c.output == "u8") j["scheme"] = c.scheme;
    j["activation_bits"] = c.activation_bits;
    bench::AddTimingJson(j, t, "gops", gops);
    j["layout"] = QGemmLayoutName(packed->layout());
    if (packed->alt_layout().nr != 0) j["alt_layout"] = QGemmLayoutName(packed->alt_layout());
    j["enabled_isas"] = context->enabled_isas().ToString();
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("gemm {}x{}x{} -> {}, {} thread(s), {} [{}]: {}, {:.1f} GOPS\n", c.m, c.n, c.k, c.output,
               context->threads(), kernel, isa, bench::TimingText(t), gops);
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

void AddGemmBenchCommand(CLI::App& app, CommandRegistry& registry) {
  CLI::App* bench = app.get_subcommand("bench");
  auto c = std::make_shared<GemmBenchCommand>();
  CLI::App* sub = bench->add_subcommand("gemm", "int8 GEMM: u8 A (M x K) x s8 W (N x K), prepacked, u8 or int32 out");
  sub->add_option("--m", c->m, "Rows of A and of the output")->required()->type_name("M");
  sub->add_option("--n", c->n, "Output channels (rows of W)")->required()->type_name("N");
  sub->add_option("--k", c->k, "Reduction length")->required()->type_name("K");
  sub->add_option("--output", c->output, "u8 (quantized linear layer) or int32 (plain accumulators)")
      ->type_name("u8|int32")
      ->capture_default_str();
  sub->add_option("--scheme", c->scheme, "Requantization of the u8 output: fp32, q31 or fbgemm")
      ->type_name("SCHEME")
      ->capture_default_str();
  sub->add_option("--activation-bits", c->activation_bits,
                  "Activations drawn in [0, 2^bits - 1]: 8 (full u8 range) or 7 ([0, 127], PyTorch's reduce_range)")
      ->type_name("7|8")
      ->capture_default_str();
  c->AddTo(sub);
  registry.Add(sub, [c] { return RunGemmBench(*c); });
}

}  // namespace octet::cli
