// `octet bench gemm`.
#include "tools/octet/gemm_bench_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
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
#include "ops/qgemm.h"
#include "ops/reference/qgemm_reference.h"
#include "tools/octet/bench_timing.h"
#include "tools/octet/context_options.h"

namespace octet::cli {
namespace {

// The peer tool's quantized linear layer: activation zero point 117, output zero point 121.
constexpr int32_t kActivationZeroPoint = 117;
constexpr int32_t kOutputZeroPoint = 121;
constexpr float kActivationScale = 0.02f;
constexpr float kWeightScale = 0.003f;
constexpr int64_t kMaxDim = int64_t{1} << 20;

struct GemmBenchCommand {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::string output = "u8";
  std::string scheme = "fp32";
  int activation_bits = 8;
  int repetitions = 5;
  bool json = false;
  ContextFlags context;
};

struct Problem {
  QTensor a;
  QTensor w;
  QGemmOutput output;
};

Result<Problem> MakeProblem(const GemmBenchCommand& c, QGemmStage stage) {
  std::mt19937_64 rng(0x5eed);
  Problem p;
  const bool quantized = c.output == "u8";
  OCTET_ASSIGN_OR_RETURN(Tensor a, Tensor::Create(DType::kU8, Shape{c.m, c.k}));
  // 7 bits: activations in [0, 127] (PyTorch's reduce_range), where AVX2's vpmaddubsw cannot saturate.
  const auto a_mask = static_cast<uint8_t>((1u << c.activation_bits) - 1);
  for (auto& v : a.values<uint8_t>()) v = static_cast<uint8_t>(rng()) & a_mask;
  OCTET_ASSIGN_OR_RETURN(QParams aq,
                         QParams::PerTensor(DType::kU8, kActivationScale, quantized ? kActivationZeroPoint : 0));
  OCTET_ASSIGN_OR_RETURN(p.a, QTensor::Create(std::move(a), std::move(aq)));
  OCTET_ASSIGN_OR_RETURN(Tensor w, Tensor::Create(DType::kS8, Shape{c.n, c.k}));
  for (auto& v : w.values<int8_t>()) v = static_cast<int8_t>(rng());
  OCTET_ASSIGN_OR_RETURN(QParams wq, QParams::PerTensor(DType::kS8, kWeightScale, 0));
  OCTET_ASSIGN_OR_RETURN(p.w, QTensor::Create(std::move(w), std::move(wq)));
  if (!quantized) {
    p.output = QGemmOutput::Int32();
    return p;
  }
  // Uniform operands: the accumulator's spread is sqrt(K) * 73.9 (u8 around 117) * 73.9 (s8); map it to ~40 LSB.
  const double acc_std = std::sqrt(static_cast<double>(std::max<int64_t>(c.k, 1))) * 73.9 * 73.9;
  const float y_scale = static_cast<float>(kActivationScale * kWeightScale * acc_std / 40.0);
  std::vector<int32_t> bias(static_cast<size_t>(c.n));
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  p.output = QGemmOutput::Requantized(stage, DType::kU8, y_scale, kOutputZeroPoint);
  if (stage == QGemmStage::kFbgemm) {
    for (int32_t b : bias) p.output.bias_f32.push_back(static_cast<float>(b) * kActivationScale * kWeightScale);
  } else {
    p.output.bias_s32 = std::move(bias);
  }
  return p;
}

// One output from the reference: row i of A times row j of W through the stage, as ops/qgemm.cc derives it.
Result<int64_t> ReferenceValue(const Problem& p, int64_t i, int64_t j) {
  const int64_t k = p.w.shape().dim(1);
  int32_t acc = 0;
  const int32_t w_zp = p.w.qparams().zero_point();
  reference::QGemmAccumulate(1, 1, static_cast<size_t>(k), p.a.values().data<uint8_t>() + i * k, 0,
                             p.a.qparams().zero_point(), p.w.values().data<int8_t>() + j * k, 0, &w_zp, &acc, 1);
  const QGemmOutput& o = p.output;
  reference::QGemmStageParams s;
  s.stage = o.stage;
  const int32_t bias = o.bias_s32.empty() ? 0 : o.bias_s32[static_cast<size_t>(j)];
  s.bias_s32 = &bias;
  const float a_scale = p.a.qparams().scale(), w_scale = p.w.qparams().scale();
  float multiplier = reference::QGemmFp32Multiplier(a_scale, w_scale, o.output_scale);
  float bias_f = 0.0f;
  int32_t q31_m = 0, q31_s = 0;
  reference::QGemmQ31Multiplier(a_scale, w_scale, o.output_scale, &q31_m, &q31_s);
  if (o.stage == QGemmStage::kFbgemm) {
    reference::QGemmFbgemmParams(a_scale, w_scale, o.output_scale, o.bias_f32[static_cast<size_t>(j)], &multiplier,
                                 &bias_f);
  }
  s.multipliers = &multiplier;
  s.bias_f32 = &bias_f;
  s.q31_multipliers = &q31_m;
  s.q31_shifts = &q31_s;
  s.zero_point = o.output_zero_point;
  s.lo = 0;
  s.hi = 255;
  if (o.stage == QGemmStage::kS32) {
    int32_t y = 0;
    reference::QGemmApplyStage(1, 1, &acc, 1, s, &y, 1);
    return int64_t{y};
  }
  uint8_t y = 0;
  reference::QGemmApplyStage(1, 1, &acc, 1, s, &y, 1);
  return int64_t{y};
}

// Every output of small problems, else 300 random ones plus the four corners; u8 outputs must not be mostly
// clamped (a check that proves nothing otherwise).
Status Check(const Problem& p, const Tensor& y, const std::string& kernel) {
  const int64_t m = p.a.shape().dim(0), n = p.w.shape().dim(0), k = p.w.shape().dim(1);
  std::vector<std::pair<int64_t, int64_t>> points;
  if (m * n * std::max<int64_t>(k, 1) <= (int64_t{1} << 24)) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) points.emplace_back(i, j);
    }
  } else {
    std::mt19937_64 rng(7);
    points = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
    for (int i = 0; i < 300; ++i) {
      points.emplace_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(m)),
                          static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
    }
  }
  size_t inside = 0;
  for (const auto& [i, j] : points) {
    OCTET_ASSIGN_OR_RETURN(int64_t want, ReferenceValue(p, i, j));
    const int64_t got = y.dtype() == DType::kS32 ? int64_t{y.data<int32_t>()[i * n + j]}
                                                 : int64_t{y.data<uint8_t>()[i * n + j]};
    if (got != want) {
      return Internal("bench gemm: {} differs from the reference at row {}, column {}: got {}, expected {}", kernel, i,
                      j, got, want);
    }
    inside += want > 0 && want < 255;
  }
  if (y.dtype() == DType::kU8 && inside * 4 < points.size()) {
    return Internal("bench gemm: only {} of {} checked outputs are inside (0, 255): the check is not meaningful",
                    inside, points.size());
  }
  return OkStatus();
}

int RunGemmBench(const GemmBenchCommand& c) {
  if (c.m < 1 || c.n < 1 || c.k < 1 || c.m > kMaxDim || c.n > kMaxDim || c.k > kMaxDim) {
    return ReportUsage(fmt::format("--m, --n and --k must be in [1, {}], got {}, {}, {}", kMaxDim, c.m, c.n, c.k));
  }
  if (c.output != "u8" && c.output != "int32") {
    return ReportUsage(fmt::format("--output must be u8 or int32, got '{}'", c.output));
  }
  QGemmStage stage = QGemmStage::kS32;
  if (c.output == "u8") {
    if (c.scheme == "fp32") {
      stage = QGemmStage::kFp32;
    } else if (c.scheme == "q31") {
      stage = QGemmStage::kQ31;
    } else if (c.scheme == "fbgemm") {
      stage = QGemmStage::kFbgemm;
    } else {
      return ReportUsage(fmt::format("--scheme must be fp32, q31 or fbgemm, got '{}'", c.scheme));
    }
  }
  if (c.activation_bits != 7 && c.activation_bits != 8) {
    return ReportUsage(fmt::format("--activation-bits must be 7 or 8, got {}", c.activation_bits));
  }
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());

  Result<Problem> problem = MakeProblem(c, stage);
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

  TimingOptions options;
  options.repetitions = c.repetitions;
  Status run_status;
  const Timing t = MeasureCalls(
      [&] {
        Status s = plan->RunInto(*context, a, out);
        if (!s.ok()) run_status = s;
      },
      options);
  if (!run_status.ok()) return ReportFailure(run_status);

  const char* isa = "scalar";
  for (const auto& e : QGemmUkernels()) {
    if (kernel == e.name) isa = IsaName(e.isa);
  }
  const double ops = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
  const double gops = ops / (t.median_us * 1e3);
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
    j["us"] = t.median_us;
    j["gops"] = gops;
    j["us_min"] = t.min_us;
    j["us_max"] = t.max_us;
    j["repetitions"] = t.repetitions;
    j["calls_per_repetition"] = t.calls_per_repetition;
    j["layout"] = QGemmLayoutName(packed->layout());
    if (packed->alt_layout().nr != 0) j["alt_layout"] = QGemmLayoutName(packed->alt_layout());
    j["enabled_isas"] = context->enabled_isas().ToString();
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("gemm {}x{}x{} -> {}, {} thread(s), {} [{}]: {:.1f} us median of {} (min {:.1f}, max {:.1f}), "
               "{:.1f} GOPS\n",
               c.m, c.n, c.k, c.output, context->threads(), kernel, isa, t.median_us, t.repetitions, t.min_us,
               t.max_us, gops);
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
  sub->add_option("--repetitions", c->repetitions, "Timed repetitions; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->type_name("R")
      ->capture_default_str();
  sub->add_flag("--json", c->json, "Print one JSON object per line");
  c->context.AddTo(sub, /*default_threads=*/1);
  registry.Add(sub, [c] { return RunGemmBench(*c); });
}

}  // namespace octet::cli
