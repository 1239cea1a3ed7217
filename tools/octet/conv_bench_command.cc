// `octet bench conv`.
#include "tools/octet/conv_bench_command.h"

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
#include "ops/qconv2d.h"
#include "tools/octet/bench_flags.h"

namespace octet::cli {
namespace {

constexpr int64_t kMaxConvDim = int64_t{1} << 16;

struct ConvBenchCommand : BenchFlags {
  int64_t c_in = 0;
  int64_t c_out = 0;
  int64_t h = 0;
  int64_t w = 0;
  int64_t kh = 0;
  int64_t kw = 0;
  int64_t stride = 1;
  int64_t pad = 0;
  int64_t groups = 1;
  std::string scheme = "fp32";
  int activation_bits = 8;
};

// Every output of small layers, else 300 samples and the four corners; most outputs must not be clamped.
Status Check(const bench::ConvProblem& p, const Tensor& y, const std::string& kernel) {
  OCTET_ASSIGN_OR_RETURN(const bench::SpotCheck check, bench::CheckConv(p, y));
  if (!check.mismatch.empty()) {
    return Internal("bench conv: {} differs from the reference at {}", kernel, check.mismatch);
  }
  if (check.MostlyClamped()) {
    return Internal("bench conv: only {} of {} checked outputs are inside (0, 255): the check is not meaningful",
                    check.inside, check.checked);
  }
  return OkStatus();
}

int RunConvBench(const ConvBenchCommand& c) {
  for (int64_t v : {c.c_in, c.c_out, c.h, c.w, c.kh, c.kw, c.stride, c.groups}) {
    if (v < 1 || v > kMaxConvDim) {
      return ReportUsage(fmt::format("--c-in, --c-out, --h, --w, --kh, --kw, --stride and --groups must be in [1, {}], "
                                     "got {}",
                                     kMaxConvDim, v));
    }
  }
  if (c.pad < 0 || c.pad > kMaxConvDim) return ReportUsage(fmt::format("--pad must be in [0, {}], got {}", kMaxConvDim, c.pad));
  if (c.c_in % c.groups != 0 || c.c_out % c.groups != 0) {
    return ReportUsage(fmt::format("--groups {} must divide --c-in {} and --c-out {}", c.groups, c.c_in, c.c_out));
  }
  Result<QGemmStage> stage = bench::ParseRequantScheme(c.scheme);
  if (!stage.ok()) return ReportUsage(fmt::format("--scheme must be fp32, q31 or fbgemm, got '{}'", c.scheme));
  if (c.activation_bits != 7 && c.activation_bits != 8) {
    return ReportUsage(fmt::format("--activation-bits must be 7 or 8, got {}", c.activation_bits));
  }
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
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
  // The path the call took (an im2col plan may run the indirect kernels) and its kernel family.
  const std::string path = context->LastKernel("qconv2d");
  const std::string family = path == "depthwise" ? "qdwconv" : path == "indirect" ? "qigemm" : "qgemm";
  const std::string kernel = context->LastKernel(family);
  if (Status s = Check(*problem, out, kernel); !s.ok()) return ReportFailure(s);

  const Result<bench::Timing> timed =
      bench::MeasureStatusCalls([&] { return plan->RunInto(*context, x, out); }, c.TimingOptions());
  if (!timed.ok()) return ReportFailure(timed.status());
  const bench::Timing& t = *timed;

  const char* isa = bench::KernelIsa(kernel, "scalar");
  const double gops = bench::ConvOps(conv, shape->dim(1), shape->dim(2)) / (t.median_us * 1e3);
  if (c.json) {
    nlohmann::ordered_json j;
    j["op"] = "conv";
    j["c_in"] = c.c_in;
    j["c_out"] = c.c_out;
    j["h"] = c.h;
    j["w"] = c.w;
    j["kh"] = c.kh;
    j["kw"] = c.kw;
    j["stride"] = c.stride;
    j["pad"] = c.pad;
    j["groups"] = c.groups;
    j["threads"] = context->threads();
    j["isa"] = isa;
    j["kernel"] = kernel;
    j["path"] = path;
    j["scheme"] = c.scheme;
    j["activation_bits"] = c.activation_bits;
    bench::AddTimingJson(j, t, "gops", gops);
    j["enabled_isas"] = context->enabled_isas().ToString();
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("conv {}->{} @{}x{} k{}x{} s{} p{} g{}, {} thread(s), {} path, {} [{}]: {}, {:.1f} GOPS\n", c.c_in,
               c.c_out, c.h, c.w, c.kh, c.kw, c.stride, c.pad, c.groups, context->threads(), path, kernel, isa,
               bench::TimingText(t), gops);
  }
  std::fflush(stdout);
  return kExitOk;
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
  sub->add_option("--scheme", c->scheme, "Requantization: fp32, q31 or fbgemm")
      ->type_name("SCHEME")
      ->capture_default_str();
  sub->add_option("--activation-bits", c->activation_bits,
                  "Activations drawn in [0, 2^bits - 1]: 8 (full u8 range) or 7 ([0, 127], PyTorch's reduce_range)")
      ->type_name("7|8")
      ->capture_default_str();
  c->AddTo(sub);
  registry.Add(sub, [c] { return RunConvBench(*c); });
}

}  // namespace octet::cli
