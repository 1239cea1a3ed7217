// `octet bench gemm`.
#include "tools/octet/gemm_bench_command.h"

#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness/peer_problem.h"
#include "bench/harness/spot_check.h"
#include "core/context.h"
#include "core/tensor.h"
#include "ops/qgemm.h"
#include "tools/octet/kernel_bench.h"

namespace octet::cli {
namespace {

constexpr int64_t kMaxGemmDim = int64_t{1} << 20;

struct GemmBenchCommand : KernelBenchFlags {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::string output = "u8";
};

int RunGemmBench(const GemmBenchCommand& c) {
  if (c.m < 1 || c.n < 1 || c.k < 1 || c.m > kMaxGemmDim || c.n > kMaxGemmDim || c.k > kMaxGemmDim) {
    return ReportUsage(fmt::format("--m, --n and --k must be in [1, {}], got {}, {}, {}", kMaxGemmDim, c.m, c.n, c.k));
  }
  if (c.output != "u8" && c.output != "int32") {
    return ReportUsage(fmt::format("--output must be u8 or int32, got '{}'", c.output));
  }
  Result<QGemmStage> stage = c.output == "u8" ? c.Stage() : QGemmStage::kS32;
  if (!stage.ok()) return ReportUsage(stage.status().message());
  if (std::string usage = c.UsageError(); !usage.empty()) return ReportUsage(usage);
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
  // Every output of small problems, else 300 samples and the four corners; u8 outputs must not be mostly clamped.
  Result<bench::SpotCheck> check = bench::CheckGemm(*problem, out);
  if (!check.ok()) return ReportFailure(check.status());
  if (Status s = SpotCheckVerdict("gemm", *check, kernel, /*clamping_matters=*/out.dtype() == DType::kU8); !s.ok()) {
    return ReportFailure(s);
  }

  KernelBenchReport report;
  report.problem = {{"op", "gemm"}, {"m", c.m}, {"n", c.n}, {"k", c.k}};
  report.variant = {{"output", c.output}};
  if (c.output == "u8") report.variant["scheme"] = c.scheme;
  report.layout = {{"layout", QGemmLayoutName(packed->layout())}};
  if (packed->alt_layout().nr != 0) report.layout["alt_layout"] = QGemmLayoutName(packed->alt_layout());
  report.text_head = fmt::format("gemm {}x{}x{} -> {}", c.m, c.n, c.k, c.output);
  report.ops = bench::GemmOps({c.m, c.n, c.k});
  return TimeAndPrintKernelBench(c, *context, kernel, report, [&] { return plan->RunInto(*context, a, out); });
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
  c->AddTo(sub, "Requantization of the u8 output: fp32, q31 or fbgemm");
  registry.Add(sub, [c] { return RunGemmBench(*c); });
}

}  // namespace octet::cli
