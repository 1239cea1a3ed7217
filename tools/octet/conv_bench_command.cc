// `octet bench conv`.
#include "tools/octet/conv_bench_command.h"

#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness/kernel_isa.h"
#include "bench/harness/peer_problem.h"
#include "bench/harness/spot_check.h"
#include "core/context.h"
#include "core/tensor.h"
#include "ops/qconv2d.h"
#include "tools/octet/kernel_bench.h"

namespace octet::cli {
namespace {

constexpr int64_t kMaxConvDim = int64_t{1} << 16;

struct ConvBenchCommand : KernelBenchFlags {
  int64_t c_in = 0;
  int64_t c_out = 0;
  int64_t h = 0;
  int64_t w = 0;
  int64_t kh = 0;
  int64_t kw = 0;
  int64_t stride = 1;
  int64_t pad = 0;
  int64_t groups = 1;
};

int RunConvBench(const ConvBenchCommand& c) {
  for (int64_t v : {c.c_in, c.c_out, c.h, c.w, c.kh, c.kw, c.stride, c.groups}) {
    if (v < 1 || v > kMaxConvDim) {
      return ReportUsage(
          fmt::format("--c-in, --c-out, --h, --w, --kh, --kw, --stride and --groups must be in [1, {}], "
                      "got {}",
                      kMaxConvDim, v));
    }
  }
  if (c.pad < 0 || c.pad > kMaxConvDim) {
    return ReportUsage(fmt::format("--pad must be in [0, {}], got {}", kMaxConvDim, c.pad));
  }
  if (c.c_in % c.groups != 0 || c.c_out % c.groups != 0) {
    return ReportUsage(fmt::format("--groups {} must divide --c-in {} and --c-out {}", c.groups, c.c_in, c.c_out));
  }
  Result<QGemmStage> stage = c.Stage();
  if (!stage.ok()) return ReportUsage(stage.status().message());
  if (std::string usage = c.UsageError(); !usage.empty()) return ReportUsage(usage);
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());

  const bench::ConvShape conv{c.c_in, c.c_out, c.h, c.w, c.kh, c.kw, c.stride, c.pad, c.groups};
  Result<bench::ConvProblem> problem = bench::MakeConvProblem(conv, *stage, c.activation_bits);
  if (!problem.ok()) return ReportFailure(problem.status());
  Result<QConv2dPlan> plan =
      QConv2dPlan::Create(*context, problem->w, problem->params, problem->x.qparams(), problem->output);
  if (!plan.ok()) return ReportFailure(plan.status());
  Result<Shape> shape = plan->OutputShape(problem->x.shape());
  if (!shape.ok()) return ReportFailure(shape.status());
  Result<Tensor> y = Tensor::Create(plan->output_dtype(), *shape);
  if (!y.ok()) return ReportFailure(y.status());
  Tensor& out = *y;
  const Tensor& x = problem->x.values();
  if (Status s = plan->RunInto(*context, x, out); !s.ok()) return ReportFailure(s);
  const auto [path, kernel] = bench::LastConvKernel(*context);
  // Every output of small layers, else 300 samples and the four corners; most outputs must not be clamped.
  Result<bench::SpotCheck> check = bench::CheckConv(*problem, out);
  if (!check.ok()) return ReportFailure(check.status());
  if (Status s = SpotCheckVerdict("conv", *check, kernel, /*clamping_matters=*/true); !s.ok()) return ReportFailure(s);

  KernelBenchReport report;
  report.problem = {{"op", "conv"}, {"c_in", c.c_in}, {"c_out", c.c_out},   {"h", c.h},     {"w", c.w},
                    {"kh", c.kh},   {"kw", c.kw},     {"stride", c.stride}, {"pad", c.pad}, {"groups", c.groups}};
  report.variant = {{"path", path}, {"scheme", c.scheme}};
  report.text_head = fmt::format("conv {}->{} @{}x{} k{}x{} s{} p{} g{}", c.c_in, c.c_out, c.h, c.w, c.kh, c.kw,
                                 c.stride, c.pad, c.groups);
  report.text_path = path;
  report.ops = bench::ConvOps(conv, shape->dim(1), shape->dim(2));
  return TimeAndPrintKernelBench(c, *context, kernel, report, [&] { return plan->RunInto(*context, x, out); });
}

}  // namespace

void AddConvBenchCommand(CLI::App& app, CommandRegistry& registry) {
  CLI::App* bench = app.get_subcommand("bench");
  auto c = std::make_shared<ConvBenchCommand>();
  CLI::App* sub = bench->add_subcommand("conv", "int8 2-D convolution: NHWC u8 input, OHWI s8 weights, u8 out");
  sub->add_option("--c-in", c->c_in, "Input channels")->required()->type_name("C");
  sub->add_option("--c-out", c->c_out, "Output channels")->required()->type_name("C");
  sub->add_option("--h", c->h, "Input height")->required()->type_name("H");
  sub->add_option("--w", c->w, "Input width")->required()->type_name("W");
  sub->add_option("--kh", c->kh, "Kernel height")->required()->type_name("K");
  sub->add_option("--kw", c->kw, "Kernel width")->required()->type_name("K");
  sub->add_option("--stride", c->stride, "Stride (both axes)")->type_name("S")->capture_default_str();
  sub->add_option("--pad", c->pad, "Padding (both sides of both axes)")->type_name("P")->capture_default_str();
  sub->add_option("--groups", c->groups, "Groups (c_in for depthwise)")->type_name("G")->capture_default_str();
  c->AddTo(sub, "Requantization: fp32, q31 or fbgemm");
  registry.Add(sub, [c] { return RunConvBench(*c); });
}

}  // namespace octet::cli
