// Google Benchmark of the int8 convolution operator (ops/qconv2d.h) over the layers of bench/shapes/conv.txt, for
// every ISA tier this CPU runs (a context capped at the tier, as `octet bench conv --isa`), 1 and 2 threads.
//
// The problem is the peer tool's (../shared/peers/README.md): batch 1, NHWC u8 input with zero point 117, OHWI s8
// weights per-tensor symmetric (prepacked outside the timing), s32 bias, one output scale, output zero point 121,
// u8 out, fp32 requantization. Each case is checked once against ops/reference before it is timed (every output of
// small layers, else 300 samples and the corners: bench/harness/spot_check.h); a difference marks it as an error and
// the program exits 1. The scalar tier only runs layers up to 2^28 operations. Name:
// qconv2d/<tier>/ic:C/oc:C/h:H/w:W/k:K/s:S/p:P/g:G/threads:T; label: path and kernel; counter: GOPS (2 OH OW c_out
// (c_in / g) kh kw per second).
//
//   octet_bench_qconv2d [--shapes=FILE] [Google Benchmark flags, e.g. --benchmark_format=json]
#include <benchmark/benchmark.h>

#include <string>

#include <fmt/format.h>

#include "bench/harness/gbench_util.h"
#include "bench/harness/kernel_isa.h"
#include "bench/harness/peer_problem.h"
#include "bench/harness/shapes.h"
#include "bench/harness/spot_check.h"
#include "core/context.h"
#include "core/cpu_features.h"
#include "core/isa.h"
#include "core/tensor.h"
#include "ops/qconv2d.h"

namespace octet {
namespace {

void BenchConv(benchmark::State& state, Isa tier, bench::ConvShape shape, int threads) {
  ContextOptions options;
  options.isa_cap = IsaSet::UpTo(tier);
  options.threads = threads;
  Context context = Context::Create(options).value();
  const bench::ConvProblem p = bench::MakeConvProblem(shape, QGemmStage::kFp32).value();
  const QConv2dPlan plan = QConv2dPlan::Create(context, p.w, p.params, p.x.qparams(), p.output).value();
  Tensor y = Tensor::Create(plan.output_dtype(), plan.OutputShape(p.x.shape()).value()).value();
  const Tensor& x = p.x.values();
  OCTET_CHECK(plan.RunInto(context, x, y).ok());
  const auto [path, kernel] = bench::LastConvKernel(context);
  if (!bench::TimeCheckedKernel(state, "octet_bench_qconv2d", kernel, bench::CheckConv(p, y).value().mismatch,
                                [&] { return plan.RunInto(context, x, y); })) {
    return;
  }
  const double ops = bench::ConvOps(shape, y.shape().dim(1), y.shape().dim(2));
  state.counters["GOPS"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(fmt::format("{} {}", path, kernel));
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  using namespace octet;
  std::string shapes_path = OCTET_BENCH_SHAPES_DIR "/conv.txt";
  if (!bench::InitializeWithShapes(argc, argv, shapes_path)) return 2;
  for (const bench::ConvShape& s : bench::ValueOrExit(bench::ReadConvShapes(shapes_path), "octet_bench_qconv2d")) {
    const int64_t oh = (s.h + 2 * s.pad - s.kh) / s.stride + 1, ow = (s.w + 2 * s.pad - s.kw) / s.stride + 1;
    for (Isa tier : bench::TiersFor(bench::ConvOps(s, oh, ow), 268435456.0)) {
      for (int threads : {1, 2}) {
        const std::string name = fmt::format("qconv2d/{}/ic:{}/oc:{}/h:{}/w:{}/k:{}x{}/s:{}/p:{}/g:{}/threads:{}",
                                             IsaName(tier), s.c_in, s.c_out, s.h, s.w, s.kh, s.kw, s.stride, s.pad,
                                             s.groups, threads);
        bench::RegisterKernelBenchmark(name, [=](benchmark::State& st) { BenchConv(st, tier, s, threads); });
      }
    }
  }
  return bench::RunRegisteredBenchmarks();
}
