// `octet bench conv`.
#include "tools/octet/conv_bench_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/isa.h"
#include "core/qparams.h"
#include "core/tensor.h"
#include "ops/qconv2d.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"
#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qigemm.h"
#include "tools/octet/bench_timing.h"
#include "tools/octet/context_options.h"

namespace octet::cli {
namespace {

// The peer tool's quantized convolution: input zero point 117, output zero point 121.
constexpr int32_t kInputZeroPoint = 117;
constexpr int32_t kOutputZeroPoint = 121;
constexpr float kInputScale = 0.02f;
constexpr float kWeightScale = 0.003f;
constexpr int64_t kMaxDim = int64_t{1} << 16;

struct ConvBenchCommand {
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
  int repetitions = 5;
  bool json = false;
  ContextFlags context;
};

struct Problem {
  Conv2dParams params;
  QTensor x;
  QTensor w;
  QGemmOutput output;
};

Result<Problem> MakeProblem(const ConvBenchCommand& c, QGemmStage stage) {
  std::mt19937_64 rng(0x5eed);
  Problem p;
  p.params.kernel_h = c.kh;
  p.params.kernel_w = c.kw;
  p.params.stride_h = p.params.stride_w = c.stride;
  p.params.pad_h = p.params.pad_w = c.pad;
  p.params.groups = c.groups;
  OCTET_ASSIGN_OR_RETURN(Tensor x, Tensor::Create(DType::kU8, Shape{1, c.h, c.w, c.c_in}));
  // 7 bits: activations in [0, 127] (PyTorch's reduce_range; the zero point 117 pads inside it), where AVX2's
  // vpmaddubsw cannot saturate and the GEMM's range check picks it.
  const auto x_mask = static_cast<uint8_t>((1u << c.activation_bits) - 1);
  for (auto& v : x.values<uint8_t>()) v = static_cast<uint8_t>(rng()) & x_mask;
  OCTET_ASSIGN_OR_RETURN(QParams xq, QParams::PerTensor(DType::kU8, kInputScale, kInputZeroPoint));
  OCTET_ASSIGN_OR_RETURN(p.x, QTensor::Create(std::move(x), std::move(xq)));
  OCTET_ASSIGN_OR_RETURN(Tensor w, Tensor::Create(DType::kS8, Shape{c.c_out, c.kh, c.kw, c.c_in / c.groups}));
  for (auto& v : w.values<int8_t>()) v = static_cast<int8_t>(rng());
  OCTET_ASSIGN_OR_RETURN(QParams wq, QParams::PerTensor(DType::kS8, kWeightScale, 0));
  OCTET_ASSIGN_OR_RETURN(p.w, QTensor::Create(std::move(w), std::move(wq)));
  // Uniform operands: the accumulator's spread is sqrt(K) * 73.9 * 73.9; map it to ~40 LSB.
  const int64_t k = c.kh * c.kw * (c.c_in / c.groups);
  const double acc_std = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))) * 73.9 * 73.9;
  const float y_scale = static_cast<float>(kInputScale * kWeightScale * acc_std / 40.0);
  std::vector<int32_t> bias(static_cast<size_t>(c.c_out));
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  p.output = QGemmOutput::Requantized(stage, DType::kU8, y_scale, kOutputZeroPoint);
  if (stage == QGemmStage::kFbgemm) {
    for (int32_t b : bias) p.output.bias_f32.push_back(static_cast<float>(b) * kInputScale * kWeightScale);
  } else {
    p.output.bias_s32 = std::move(bias);
  }
  return p;
}

// One output from the reference, with the stage derived as ops/qgemm.cc derives it (per-tensor weights).
int64_t ReferenceValue(const Problem& p, const reference::Conv2dGeometry& g, int64_t oy, int64_t ox, int64_t o) {
  const int32_t w_zp = 0;
  std::vector<int32_t> zps(static_cast<size_t>(g.c_out), w_zp);
  const int32_t acc = reference::QConv2dAccumulateOne(g, p.x.values().data<uint8_t>(), kInputZeroPoint,
                                                      p.w.values().data<int8_t>(), zps.data(), 0, oy, ox, o);
  const QGemmOutput& out = p.output;
  reference::QGemmStageParams s;
  s.stage = out.stage;
  const int32_t bias = out.bias_s32.empty() ? 0 : out.bias_s32[static_cast<size_t>(o)];
  s.bias_s32 = &bias;
  float multiplier = reference::QGemmFp32Multiplier(kInputScale, kWeightScale, out.output_scale);
  float bias_f = 0.0f;
  int32_t q31_m = 0, q31_s = 0;
  reference::QGemmQ31Multiplier(kInputScale, kWeightScale, out.output_scale, &q31_m, &q31_s);
  if (out.stage == QGemmStage::kFbgemm) {
    reference::QGemmFbgemmParams(kInputScale, kWeightScale, out.output_scale, out.bias_f32[static_cast<size_t>(o)],
                                 &multiplier, &bias_f);
  }
  s.multipliers = &multiplier;
  s.bias_f32 = &bias_f;
  s.q31_multipliers = &q31_m;
  s.q31_shifts = &q31_s;
  s.zero_point = out.output_zero_point;
  s.lo = 0;
  s.hi = 255;
  uint8_t y = 0;
  reference::QGemmApplyStage(1, 1, &acc, 1, s, &y, 1);
  return int64_t{y};
}

Status Check(const Problem& p, const Tensor& y, const std::string& kernel) {
  const reference::Conv2dGeometry g = Conv2dGeometryFor(p.params, p.w.shape(), p.x.shape(), "bench conv").value();
  const int64_t oh = g.OutH(), ow = g.OutW(), co = g.c_out;
  const int64_t per_output = g.kh * g.kw * (g.c_in / g.groups);
  struct Point {
    int64_t oy, ox, o;
  };
  std::vector<Point> points;
  if (oh * ow * co * per_output <= (int64_t{1} << 22)) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t o = 0; o < co; ++o) points.push_back({oy, ox, o});
      }
    }
  } else {
    std::mt19937_64 rng(7);
    points = {{0, 0, 0}, {0, ow - 1, co - 1}, {oh - 1, 0, 0}, {oh - 1, ow - 1, co - 1}};
    for (int i = 0; i < 300; ++i) {
      points.push_back({static_cast<int64_t>(rng() % static_cast<uint64_t>(oh)),
                        static_cast<int64_t>(rng() % static_cast<uint64_t>(ow)),
                        static_cast<int64_t>(rng() % static_cast<uint64_t>(co))});
    }
  }
  size_t inside = 0;
  for (const Point& pt : points) {
    const int64_t want = ReferenceValue(p, g, pt.oy, pt.ox, pt.o);
    const int64_t got = y.data<uint8_t>()[(pt.oy * ow + pt.ox) * co + pt.o];
    if (got != want) {
      return Internal("bench conv: {} differs from the reference at pixel ({}, {}), channel {}: got {}, expected {}",
                      kernel, pt.oy, pt.ox, pt.o, got, want);
    }
    inside += want > 0 && want < 255;
  }
  if (inside * 4 < points.size()) {
    return Internal("bench conv: only {} of {} checked outputs are inside (0, 255): the check is not meaningful",
                    inside, points.size());
  }
  return OkStatus();
}

int RunConvBench(const ConvBenchCommand& c) {
  for (int64_t v : {c.c_in, c.c_out, c.h, c.w, c.kh, c.kw, c.stride, c.groups}) {
    if (v < 1 || v > kMaxDim) {
      return ReportUsage(fmt::format("--c-in, --c-out, --h, --w, --kh, --kw, --stride and --groups must be in [1, {}], "
                                     "got {}",
                                     kMaxDim, v));
    }
  }
  if (c.pad < 0 || c.pad > kMaxDim) return ReportUsage(fmt::format("--pad must be in [0, {}], got {}", kMaxDim, c.pad));
  if (c.c_in % c.groups != 0 || c.c_out % c.groups != 0) {
    return ReportUsage(fmt::format("--groups {} must divide --c-in {} and --c-out {}", c.groups, c.c_in, c.c_out));
  }
  QGemmStage stage = QGemmStage::kFp32;
  if (c.scheme == "q31") {
    stage = QGemmStage::kQ31;
  } else if (c.scheme == "fbgemm") {
    stage = QGemmStage::kFbgemm;
  } else if (c.scheme != "fp32") {
    return ReportUsage(fmt::format("--scheme must be fp32, q31 or fbgemm, got '{}'", c.scheme));
  }
  if (c.activation_bits != 7 && c.activation_bits != 8) {
    return ReportUsage(fmt::format("--activation-bits must be 7 or 8, got {}", c.activation_bits));
  }
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());

  Result<Problem> problem = MakeProblem(c, stage);
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

  TimingOptions options;
  options.repetitions = c.repetitions;
  Status run_status;
  const Timing t = MeasureCalls(
      [&] {
        Status s = plan->RunInto(*context, x, out);
        if (!s.ok()) run_status = s;
      },
      options);
  if (!run_status.ok()) return ReportFailure(run_status);

  const char* isa = "scalar";
  for (const auto& e : QGemmUkernels()) {
    if (kernel == e.name) isa = IsaName(e.isa);
  }
  for (const auto& e : QDwConvUkernels()) {
    if (kernel == e.name) isa = IsaName(e.isa);
  }
  for (const auto& e : QIgemmUkernels()) {
    if (kernel == e.name) isa = IsaName(e.isa);
  }
  const int64_t oh = shape->dim(1), ow = shape->dim(2);
  const double ops = 2.0 * static_cast<double>(oh * ow * c.c_out) * static_cast<double>(c.c_in / c.groups) *
                     static_cast<double>(c.kh * c.kw);
  const double gops = ops / (t.median_us * 1e3);
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
    j["us"] = t.median_us;
    j["gops"] = gops;
    j["us_min"] = t.min_us;
    j["us_max"] = t.max_us;
    j["repetitions"] = t.repetitions;
    j["calls_per_repetition"] = t.calls_per_repetition;
    j["enabled_isas"] = context->enabled_isas().ToString();
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("conv {}->{} @{}x{} k{}x{} s{} p{} g{}, {} thread(s), {} path, {} [{}]: {:.1f} us median of {} "
               "(min {:.1f}, max {:.1f}), {:.1f} GOPS\n",
               c.c_in, c.c_out, c.h, c.w, c.kh, c.kw, c.stride, c.pad, c.groups, context->threads(), path, kernel,
               isa, t.median_us, t.repetitions, t.min_us, t.max_us, gops);
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
  sub->add_option("--repetitions", c->repetitions, "Timed repetitions; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->type_name("R")
      ->capture_default_str();
  sub->add_flag("--json", c->json, "Print one JSON object per line");
  c->context.AddTo(sub, /*default_threads=*/1);
  registry.Add(sub, [c] { return RunConvBench(*c); });
}

}  // namespace octet::cli
