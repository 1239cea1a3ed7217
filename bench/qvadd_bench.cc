// Google Benchmark of every qvadd kernel (QAdd of two same-shape u8 / s8 tensors, fp32 scheme) beside the scalar
// reference loop (reference::QAddFp32Value per element). Single thread, one kernel call over the whole array.
//
// Sizes: 2048 elements (L1-resident: the kernel's own speed) and 200704 = 64 x 56 x 56 (ResNet-18's first residual
// add). bytes_per_second counts the two inputs read and the output written. Each kernel is checked once against
// the reference before timing; a difference marks the benchmark as an error and makes the program exit 1. Kernels
// whose ISA this CPU lacks are reported as skipped.
//
//   octet_bench_qvadd [Google Benchmark flags, e.g. --benchmark_format=json]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/harness/fill.h"
#include "bench/harness/gbench_util.h"
#include "core/cpu_features.h"
#include "core/isa.h"
#include "ops/reference/qelementwise_reference.h"
#include "ops/ukernels/qvadd.h"

namespace octet {
namespace {

QVAddParams Params(int32_t lo, int32_t hi, int32_t mid) {
  return reference::MakeQAddFp32Params({0.031f, mid + 3}, {0.047f, mid - 5}, {0.06f, mid + 1}, lo, hi).value();
}

template <typename T>
std::vector<T> Random(size_t n, uint32_t seed) {
  std::vector<T> v(n);
  bench::FillIntegers<T>(v, seed);
  return v;
}

template <typename T>
void Run(benchmark::State& state, const char* name, Isa isa, QVAddUkernelFn<T> fn) {
  if (!bench::SkipUnlessDetected(state, isa)) return;
  const size_t n = static_cast<size_t>(state.range(0));
  const bool u8 = std::is_same_v<T, uint8_t>;
  const QVAddParams p = u8 ? Params(0, 255, 128) : Params(-128, 127, 0);
  const std::vector<T> a = Random<T>(n, 0x2545f491u), b = Random<T>(n, 0x9e3779b9u);
  std::vector<T> y(n);
  if (fn != nullptr) {
    fn(n, a.data(), b.data(), y.data(), p);
    for (size_t i = 0; i < n; ++i) {
      if (y[i] != static_cast<T>(reference::QAddFp32Value(a[i], b[i], p))) {
        return bench::ReportMismatch(state, "octet_bench_qvadd",
                                     fmt::format("{} differs from the reference at element {}", name, i));
      }
    }
  }
  for (auto _ : state) {
    if (fn != nullptr) {
      fn(n, a.data(), b.data(), y.data(), p);
    } else {
      for (size_t i = 0; i < n; ++i) y[i] = static_cast<T>(reference::QAddFp32Value(a[i], b[i], p));
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(3 * n * sizeof(T)));
  state.SetLabel(IsaName(isa));
}

template <typename T>
void RegisterFor(const char* type) {
  for (const auto& uk : QVAddUkernels<T>()) {
    benchmark::RegisterBenchmark(uk.name, [uk](benchmark::State& s) { Run<T>(s, uk.name, uk.isa, uk.fn); })
        ->Arg(2048)
        ->Arg(200704)
        ->UseRealTime();
  }
  const std::string ref = fmt::format("reference_qadd_{}_fp32", type);
  benchmark::RegisterBenchmark(ref.c_str(), [](benchmark::State& s) {
    Run<T>(s, "reference", Isa::kScalar, nullptr);
  })->Arg(2048)->Arg(200704)->UseRealTime();
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  octet::RegisterFor<uint8_t>("u8");
  octet::RegisterFor<int8_t>("s8");
  benchmark::Initialize(&argc, argv);
  return octet::bench::RunRegisteredBenchmarks();
}
