// Google Benchmark of the int8 GEMM operator (ops/qgemm.h) over the shapes of bench/shapes/gemm.txt, for every ISA
// tier this CPU runs (a context capped at the tier: the best qgemm kernel at or below it, as `octet bench gemm
// --isa`), int32 and u8 outputs, 1 and 2 threads.
//
// The problem is the peer tool's (../shared/peers/README.md): A is M x K u8, W is N x K s8 per-tensor symmetric,
// prepacked outside the timing. `int32`: plain u8 x s8 -> s32 (no zero point, no bias). `u8`: a quantized linear
// layer with activation zero point 117, s32 bias, one output scale, output zero point 121, fp32 requantization.
// Each case is checked once against ops/reference before it is timed (every output of small shapes, else 300 samples
// and the corners); a difference marks it as an error and the program exits 1. The scalar tier only runs shapes up to
// 2^30 operations. Name: qgemm/<tier>/<output>/m:M/n:N/k:K/threads:T; label: the kernel symbol that ran; counters:
// GOPS (2 M N K per second), bytes_per_second (A + packed W + y per call).
//
//   octet_bench_qgemm [--shapes=FILE] [Google Benchmark flags, e.g. --benchmark_format=json]
#include <benchmark/benchmark.h>

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
#include "ops/qgemm.h"
#include "ops/reference/qgemm_reference.h"

namespace octet {
namespace {

bool g_mismatch = false;

struct GemmShape {
  int64_t m, n, k;
};

struct Problem {
  QTensor a;
  QTensor w;
  QGemmOutput output;
};

Problem MakeProblem(const GemmShape& s, bool quantized) {
  std::mt19937_64 rng(0x5eed);
  Tensor a = Tensor::Create(DType::kU8, Shape{s.m, s.k}).value();
  for (auto& v : a.values<uint8_t>()) v = static_cast<uint8_t>(rng());
  Tensor w = Tensor::Create(DType::kS8, Shape{s.n, s.k}).value();
  for (auto& v : w.values<int8_t>()) v = static_cast<int8_t>(rng());
  Problem p;
  p.a = QTensor::Create(std::move(a), QParams::PerTensor(DType::kU8, 0.02f, quantized ? 117 : 0).value()).value();
  p.w = QTensor::Create(std::move(w), QParams::PerTensor(DType::kS8, 0.003f, 0).value()).value();
  if (!quantized) {
    p.output = QGemmOutput::Int32();
    return p;
  }
  // The accumulator's spread for uniform operands, sqrt(K) * 73.9 * 73.9, mapped to ~40 output LSB.
  const double acc_std = std::sqrt(static_cast<double>(s.k)) * 73.9 * 73.9;
  std::vector<int32_t> bias(static_cast<size_t>(s.n));
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  p.output = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kU8,
                                      static_cast<float>(0.02 * 0.003 * acc_std / 40.0), 121, std::move(bias));
  return p;
}

int64_t ReferenceValue(const Problem& p, int64_t i, int64_t j) {
  const int64_t k = p.w.shape().dim(1);
  const int32_t w_zp = 0;
  int32_t acc = 0;
  reference::QGemmAccumulate(1, 1, static_cast<size_t>(k), p.a.values().data<uint8_t>() + i * k, 0,
                             p.a.qparams().zero_point(), p.w.values().data<int8_t>() + j * k, 0, &w_zp, &acc, 1);
  reference::QGemmStageParams s;
  s.stage = p.output.stage;
  const int32_t bias = p.output.bias_s32.empty() ? 0 : p.output.bias_s32[static_cast<size_t>(j)];
  s.bias_s32 = &bias;
  const float m = reference::QGemmFp32Multiplier(p.a.qparams().scale(), p.w.qparams().scale(), p.output.output_scale);
  s.multipliers = &m;
  s.zero_point = p.output.output_zero_point;
  int32_t y32 = 0;
  uint8_t y8 = 0;
  reference::QGemmApplyStage(1, 1, &acc, 1, s, s.stage == QGemmStage::kS32 ? static_cast<void*>(&y32) : &y8, 1);
  return s.stage == QGemmStage::kS32 ? y32 : y8;
}

// An empty string if y matches the reference at every checked point.
std::string Check(const Problem& p, const Tensor& y) {
  const int64_t m = p.a.shape().dim(0), n = p.w.shape().dim(0), k = p.w.shape().dim(1);
  std::vector<std::pair<int64_t, int64_t>> points = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
  if (m * n * k <= (int64_t{1} << 24)) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) points.emplace_back(i, j);
    }
  } else {
    std::mt19937_64 rng(7);
    for (int t = 0; t < 300; ++t) {
      points.emplace_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(m)),
                          static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
    }
  }
  for (const auto& [i, j] : points) {
    const int64_t want = ReferenceValue(p, i, j);
    const int64_t got = y.dtype() == DType::kS32 ? y.data<int32_t>()[i * n + j] : y.data<uint8_t>()[i * n + j];
    if (got != want) return fmt::format("row {}, column {}: got {}, expected {}", i, j, got, want);
  }
  return "";
}

void BenchGemm(benchmark::State& state, Isa tier, GemmShape shape, bool quantized, int threads) {
  ContextOptions options;
  options.isa_cap = IsaSet::UpTo(tier);
  options.threads = threads;
  Context context = Context::Create(options).value();
  const Problem p = MakeProblem(shape, quantized);
  const PackedWeights packed = PackedWeights::Prepack(context, p.w).value();
  const QGemmPlan plan = QGemmPlan::Create(packed, p.a.qparams(), p.output).value();
  Tensor y = Tensor::Create(plan.output_dtype(), Shape{shape.m, shape.n}).value();
  const Tensor& a = p.a.values();
  OCTET_CHECK(plan.RunInto(context, a, y).ok());
  const std::string kernel = context.LastKernel("qgemm");
  if (const std::string diff = Check(p, y); !diff.empty()) {
    g_mismatch = true;
    const std::string what = fmt::format("{} differs from the reference at {}", kernel, diff);
    fmt::print(stderr, "octet_bench_qgemm: {}\n", what);
    state.SkipWithError(what.c_str());
    return;
  }
  for (auto _ : state) {
    const Status s = plan.RunInto(context, a, y);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  const double ops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
  state.counters["GOPS"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(state.iterations() *
                          (shape.m * shape.k + packed.layout().PackedBytes(shape.n, shape.k) +
                           shape.m * shape.n * (quantized ? 1 : 4)));
  state.SetLabel(kernel);
}

std::vector<GemmShape> ReadShapes(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "octet_bench_qgemm: cannot read shapes file '{}'\n", path);
    std::exit(2);
  }
  std::vector<GemmShape> shapes;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    GemmShape s{};
    if (std::sscanf(line.c_str(), " %ldx%ldx%ld", &s.m, &s.n, &s.k) != 3 || s.m < 1 || s.n < 1 || s.k < 1) {
      fmt::print(stderr, "octet_bench_qgemm: '{}': bad shape line '{}' (want MxNxK)\n", path, line);
      std::exit(2);
    }
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  std::string shapes_path = OCTET_BENCH_SHAPES_DIR "/gemm.txt";
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
  for (const GemmShape& s : ReadShapes(shapes_path)) {
    for (Isa tier : DetectedIsas().ToVector()) {
      const double ops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
      if (tier == Isa::kScalar && ops > 1073741824.0) continue;
      for (bool quantized : {false, true}) {
        for (int threads : {1, 2}) {
          const std::string name = fmt::format("qgemm/{}/{}/m:{}/n:{}/k:{}/threads:{}", IsaName(tier),
                                               quantized ? "u8" : "int32", s.m, s.n, s.k, threads);
          benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
            BenchGemm(st, tier, s, quantized, threads);
          })->UseRealTime()->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return octet::g_mismatch ? 1 : 0;
}
