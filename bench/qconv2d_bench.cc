// Google Benchmark of the int8 convolution operator (ops/qconv2d.h) over the layers of bench/shapes/conv.txt, for
// every ISA tier this CPU runs (a context capped at the tier, as `octet bench conv --isa`), 1 and 2 threads.
//
// The problem is the peer tool's (../shared/peers/README.md): batch 1, NHWC u8 input with zero point 117, OHWI s8
// weights per-tensor symmetric (prepacked outside the timing), s32 bias, one output scale, output zero point 121,
// u8 out, fp32 requantization. Each case is checked once against ops/reference before it is timed (300 sampled
// outputs and the corners); a difference marks it as an error and the program exits 1. The scalar tier only runs
// layers up to 2^28 operations. Name: qconv2d/<tier>/ic:C/oc:C/h:H/w:W/k:K/s:S/p:P/g:G/threads:T; label: path and
// kernel; counter: GOPS (2 OH OW c_out (c_in / g) kh kw per second).
//
//   octet_bench_qconv2d [--shapes=FILE] [Google Benchmark flags, e.g. --benchmark_format=json]
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/isa.h"
#include "core/qparams.h"
#include "core/tensor.h"
#include "ops/qconv2d.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"

namespace octet {
namespace {

bool g_mismatch = false;

struct ConvShape {
  int64_t c_in, c_out, h, w, kh, kw, stride, pad, groups;
};

struct Problem {
  Conv2dParams params;
  QTensor x;
  QTensor w;
  QGemmOutput output;
};

Problem MakeProblem(const ConvShape& s) {
  std::mt19937_64 rng(0x5eed);
  Problem p;
  p.params.kernel_h = s.kh;
  p.params.kernel_w = s.kw;
  p.params.stride_h = p.params.stride_w = s.stride;
  p.params.pad_h = p.params.pad_w = s.pad;
  p.params.groups = s.groups;
  Tensor x = Tensor::Create(DType::kU8, Shape{1, s.h, s.w, s.c_in}).value();
  for (auto& v : x.values<uint8_t>()) v = static_cast<uint8_t>(rng());
  Tensor w = Tensor::Create(DType::kS8, Shape{s.c_out, s.kh, s.kw, s.c_in / s.groups}).value();
  for (auto& v : w.values<int8_t>()) v = static_cast<int8_t>(rng());
  p.x = QTensor::Create(std::move(x), QParams::PerTensor(DType::kU8, 0.02f, 117).value()).value();
  p.w = QTensor::Create(std::move(w), QParams::PerTensor(DType::kS8, 0.003f, 0).value()).value();
  const double acc_std = std::sqrt(static_cast<double>(s.kh * s.kw * (s.c_in / s.groups))) * 73.9 * 73.9;
  std::vector<int32_t> bias(static_cast<size_t>(s.c_out));
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  p.output = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kU8,
                                      static_cast<float>(0.02 * 0.003 * acc_std / 40.0), 121, std::move(bias));
  return p;
}

// An empty string if y matches the reference at every checked point.
std::string Check(const Problem& p, const Tensor& y) {
  const reference::Conv2dGeometry g = Conv2dGeometryFor(p.params, p.w.shape(), p.x.shape(), "bench").value();
  const int64_t oh = g.OutH(), ow = g.OutW(), co = g.c_out;
  std::vector<int32_t> zps(static_cast<size_t>(co), 0);
  std::mt19937_64 rng(7);
  std::vector<std::array<int64_t, 3>> points = {{0, 0, 0}, {oh - 1, ow - 1, co - 1}, {0, ow - 1, 0}, {oh - 1, 0, 0}};
  for (int t = 0; t < 300; ++t) {
    points.push_back({static_cast<int64_t>(rng() % static_cast<uint64_t>(oh)),
                      static_cast<int64_t>(rng() % static_cast<uint64_t>(ow)),
                      static_cast<int64_t>(rng() % static_cast<uint64_t>(co))});
  }
  const float m = reference::QGemmFp32Multiplier(0.02f, 0.003f, p.output.output_scale);
  for (const auto& [oy, ox, o] : points) {
    const int32_t acc = reference::QConv2dAccumulateOne(g, p.x.values().data<uint8_t>(), 117,
                                                        p.w.values().data<int8_t>(), zps.data(), 0, oy, ox, o);
    reference::QGemmStageParams s;
    s.stage = QGemmStage::kFp32;
    s.bias_s32 = &p.output.bias_s32[static_cast<size_t>(o)];
    s.multipliers = &m;
    s.zero_point = 121;
    uint8_t want = 0;
    reference::QGemmApplyStage(1, 1, &acc, 1, s, &want, 1);
    const uint8_t got = y.data<uint8_t>()[(oy * ow + ox) * co + o];
    if (got != want) return fmt::format("pixel ({}, {}), channel {}: got {}, expected {}", oy, ox, o, got, want);
  }
  return "";
}

void BenchConv(benchmark::State& state, Isa tier, ConvShape shape, int threads) {
  ContextOptions options;
  options.isa_cap = IsaSet::UpTo(tier);
  options.threads = threads;
  Context context = Context::Create(options).value();
  const Problem p = MakeProblem(shape);
  const QConv2dPlan plan = QConv2dPlan::Create(context, p.w, p.params, p.x.qparams(), p.output).value();
  Tensor y = Tensor::Create(plan.output_dtype(), plan.OutputShape(p.x.shape()).value()).value();
  const Tensor& x = p.x.values();
  OCTET_CHECK(plan.RunInto(context, x, y).ok());
  const std::string kernel =
      context.LastKernel(std::string(plan.path()) == "depthwise" ? "qdwconv" : "qgemm");
  if (const std::string diff = Check(p, y); !diff.empty()) {
    g_mismatch = true;
    const std::string what = fmt::format("{} differs from the reference at {}", kernel, diff);
    fmt::print(stderr, "octet_bench_qconv2d: {}\n", what);
    state.SkipWithError(what.c_str());
    return;
  }
  for (auto _ : state) {
    const Status s = plan.RunInto(context, x, y);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  const double ops = 2.0 * static_cast<double>(y.shape().dim(1) * y.shape().dim(2) * shape.c_out) *
                     static_cast<double>(shape.c_in / shape.groups * shape.kh * shape.kw);
  state.counters["GOPS"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(fmt::format("{} {}", plan.path(), kernel));
}

std::vector<ConvShape> ReadShapes(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "octet_bench_qconv2d: cannot read shapes file '{}'\n", path);
    std::exit(2);
  }
  std::vector<ConvShape> shapes;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ConvShape s{};
    if (std::sscanf(line.c_str(), " %ld %ld %ld %ld %ld %ld %ld %ld %ld", &s.c_in, &s.c_out, &s.h, &s.w, &s.kh, &s.kw,
                    &s.stride, &s.pad, &s.groups) != 9 ||
        s.c_in < 1 || s.c_out < 1 || s.groups < 1 || s.c_in % s.groups != 0 || s.c_out % s.groups != 0) {
      fmt::print(stderr, "octet_bench_qconv2d: '{}': bad layer line '{}' (want c_in c_out h w kh kw stride pad "
                         "groups)\n",
                 path, line);
      std::exit(2);
    }
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  std::string shapes_path = OCTET_BENCH_SHAPES_DIR "/conv.txt";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--shapes=", 0) == 0) {
      shapes_path = a.substr(9);
    } else {
      args.push_back(argv[i]);
    }
  }
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 2;

  using namespace octet;
  for (const ConvShape& s : ReadShapes(shapes_path)) {
    for (Isa tier : DetectedIsas().ToVector()) {
      const int64_t oh = (s.h + 2 * s.pad - s.kh) / s.stride + 1, ow = (s.w + 2 * s.pad - s.kw) / s.stride + 1;
      const double ops = 2.0 * static_cast<double>(oh * ow * s.c_out * (s.c_in / s.groups) * s.kh * s.kw);
      if (tier == Isa::kScalar && ops > 268435456.0) continue;
      for (int threads : {1, 2}) {
        const std::string name = fmt::format("qconv2d/{}/ic:{}/oc:{}/h:{}/w:{}/k:{}x{}/s:{}/p:{}/g:{}/threads:{}",
                                             IsaName(tier), s.c_in, s.c_out, s.h, s.w, s.kh, s.kw, s.stride, s.pad,
                                             s.groups, threads);
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { BenchConv(st, tier, s, threads); })
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return octet::g_mismatch ? 1 : 0;
}
