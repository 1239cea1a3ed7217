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

#include <string>

#include <fmt/format.h>

#include "bench/harness/gbench_util.h"
#include "bench/harness/peer_problem.h"
#include "bench/harness/shapes.h"
#include "bench/harness/spot_check.h"
#include "core/context.h"
#include "core/cpu_features.h"
#include "core/isa.h"
#include "core/tensor.h"
#include "ops/qgemm.h"

namespace octet {
namespace {

void BenchGemm(benchmark::State& state, Isa tier, bench::GemmShape shape, bool quantized, int threads) {
  ContextOptions options;
  options.isa_cap = IsaSet::UpTo(tier);
  options.threads = threads;
  Context context = Context::Create(options).value();
  bench::GemmProblemOptions problem_options;
  problem_options.stage = quantized ? QGemmStage::kFp32 : QGemmStage::kS32;
  const bench::GemmProblem p = bench::MakeGemmProblem(shape, problem_options).value();
  const PackedWeights packed = PackedWeights::Prepack(context, p.w).value();
  const QGemmPlan plan = QGemmPlan::Create(packed, p.a.qparams(), p.output).value();
  Tensor y = Tensor::Create(plan.output_dtype(), Shape{shape.m, shape.n}).value();
  const Tensor& a = p.a.values();
  OCTET_CHECK(plan.RunInto(context, a, y).ok());
  const std::string kernel = context.LastKernel("qgemm");
  if (!bench::TimeCheckedKernel(state, "octet_bench_qgemm", kernel, bench::CheckGemm(p, y).value().mismatch,
                                [&] { return plan.RunInto(context, a, y); })) {
    return;
  }
  state.counters["GOPS"] =
      benchmark::Counter(bench::GemmOps(shape) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(state.iterations() *
                          (shape.m * shape.k + packed.layout().PackedBytes(shape.n, shape.k) +
                           shape.m * shape.n * (quantized ? 1 : 4)));
  state.SetLabel(kernel);
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  using namespace octet;
  std::string shapes_path = OCTET_BENCH_SHAPES_DIR "/gemm.txt";
  if (!bench::InitializeWithShapes(argc, argv, shapes_path)) return 2;
  for (const bench::GemmShape& s : bench::ValueOrExit(bench::ReadGemmShapes(shapes_path), "octet_bench_qgemm")) {
    for (Isa tier : bench::TiersFor(bench::GemmOps(s), 1073741824.0)) {
      for (bool quantized : {false, true}) {
        for (int threads : {1, 2}) {
          const std::string name = fmt::format("qgemm/{}/{}/m:{}/n:{}/k:{}/threads:{}", IsaName(tier),
                                               quantized ? "u8" : "int32", s.m, s.n, s.k, threads);
          bench::RegisterKernelBenchmark(
              name, [=](benchmark::State& st) { BenchGemm(st, tier, s, quantized, threads); });
        }
      }
    }
  }
  return bench::RunRegisteredBenchmarks();
}
