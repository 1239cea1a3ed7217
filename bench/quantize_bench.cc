// Google Benchmark of every quantize (f32 -> u8/s8/s32) and dequantize (u8/s8/s32 -> f32) kernel in the family
// lists, beside a memcpy moving the same bytes. Single thread, one kernel call over the whole array.
//
// Sizes: the element counts of bench/shapes/quantize.txt (16Mi: DRAM bandwidth) plus 2048 elements (at most
// 16 KiB in + out, L1-resident: the kernel's own speed). bytes_per_second counts bytes read plus bytes written
// (4 + sizeof(int type) per element); memcpy/n:N/bytes_per_element:B copies N*B/2 bytes, the same traffic, so its
// bytes_per_second is the bound to compare with. Rates use wall-clock time (UseRealTime), like `octet bench` and
// ../shared/peers/compare. The label is the kernel's ISA. Each kernel is checked once
// against ops/reference before timing; a difference marks that benchmark as an error and makes the program exit 1.
// Kernels whose ISA this CPU lacks are reported as errors naming the missing ISA (skipped, not timed).
//
//   octet_bench_quantize [--shapes=FILE] [Google Benchmark flags, e.g. --benchmark_format=json]
#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/harness/fill.h"
#include "bench/harness/gbench_util.h"
#include "bench/harness/shapes.h"
#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "core/tensor.h"
#include "ops/reference/quantize_reference.h"
#include "ops/ukernels/dequantize.h"
#include "ops/ukernels/quantize.h"

namespace octet {
namespace {

constexpr float kScale = 0.05f;
constexpr int32_t kZeroPoint = 117;
constexpr int64_t kL1Elements = 2048;

Tensor MakeTensor(DType dtype, int64_t n) {
  Result<Tensor> t = Tensor::Create(dtype, Shape{n});
  OCTET_CHECK(t.ok());
  return std::move(t).value();
}

void SetCounters(benchmark::State& state, Isa isa, int64_t n, int64_t bytes_per_element) {
  state.SetBytesProcessed(state.iterations() * n * bytes_per_element);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(IsaName(isa));
  state.counters["elements"] = static_cast<double>(n);
}

template <typename T>
void BenchQuantize(benchmark::State& state, const UkernelEntry<QuantizeUkernelFn<T>>& kernel, int64_t n) {
  if (!bench::SkipUnlessDetected(state, kernel.isa)) return;
  const DType dtype = DTypeOf<T>::value;
  Tensor x = MakeTensor(DType::kF32, n);
  Tensor y = MakeTensor(dtype, n);
  bench::FillQuantizeInputs(x.values<float>(), 0x2545f491u);
  const QuantizeParams params{1.0f / kScale, kZeroPoint, static_cast<int32_t>(DTypeMin(dtype)),
                              static_cast<int32_t>(DTypeMax(dtype))};
  const float* xp = x.data<float>();
  T* yp = y.data<T>();
  const size_t count = static_cast<size_t>(n);

  kernel.fn(count, xp, yp, params);
  for (size_t i = 0; i < count; ++i) {
    const T want =
        reference::QuantizeValue<T>(xp[i], params.inv_scale, params.zero_point, params.quant_min, params.quant_max);
    if (yp[i] != want) {
      return bench::ReportMismatch(state, "octet_bench_quantize",
                                   fmt::format("{} differs from the reference at element {} (x = {}): got {}, "
                                               "expected {}",
                                               kernel.name, i, xp[i], int64_t{yp[i]}, int64_t{want}));
    }
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernel.fn(count, xp, yp, params));
    benchmark::ClobberMemory();
  }
  SetCounters(state, kernel.isa, n, static_cast<int64_t>(sizeof(float) + sizeof(T)));
}

template <typename T>
void BenchDequantize(benchmark::State& state, const UkernelEntry<DequantizeUkernelFn<T>>& kernel, int64_t n) {
  if (!bench::SkipUnlessDetected(state, kernel.isa)) return;
  Tensor q = MakeTensor(DTypeOf<T>::value, n);
  Tensor y = MakeTensor(DType::kF32, n);
  bench::FillIntegers(q.values<T>(), 0x9e3779b9u);
  const DequantizeParams params{kScale, kZeroPoint};
  const T* qp = q.data<T>();
  float* yp = y.data<float>();
  const size_t count = static_cast<size_t>(n);

  kernel.fn(count, qp, yp, params);
  for (size_t i = 0; i < count; ++i) {
    const float want = reference::DequantizeValue<T>(qp[i], params.scale, params.zero_point);
    if (std::bit_cast<uint32_t>(yp[i]) != std::bit_cast<uint32_t>(want)) {
      return bench::ReportMismatch(state, "octet_bench_quantize",
                                   fmt::format("{} differs from the reference at element {} (q = {}): got {}, "
                                               "expected {}",
                                               kernel.name, i, int64_t{qp[i]}, yp[i], want));
    }
  }
  for (auto _ : state) {
    kernel.fn(count, qp, yp, params);
    benchmark::ClobberMemory();
  }
  SetCounters(state, kernel.isa, n, static_cast<int64_t>(sizeof(float) + sizeof(T)));
}

// memcpy of n * bytes_per_element / 2 bytes: the traffic (read + written) of a kernel over n elements.
void BenchMemcpy(benchmark::State& state, int64_t n, int64_t bytes_per_element) {
  const int64_t bytes = n * bytes_per_element / 2;
  Tensor src = MakeTensor(DType::kU8, bytes);
  Tensor dst = MakeTensor(DType::kU8, bytes);
  std::memset(src.raw_data(), 0x5a, static_cast<size_t>(bytes));
  for (auto _ : state) {
    std::memcpy(dst.raw_data(), src.raw_data(), static_cast<size_t>(bytes));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes * 2);
  state.SetLabel("memcpy");
  state.counters["elements"] = static_cast<double>(n);
}

template <typename T>
void RegisterFamilies(const std::vector<int64_t>& sizes) {
  for (int64_t n : sizes) {
    for (const auto& k : QuantizeUkernels<T>()) {
      benchmark::RegisterBenchmark(fmt::format("{}/n:{}", k.name, n).c_str(),
                                   [k, n](benchmark::State& s) { BenchQuantize<T>(s, k, n); })
          ->UseRealTime();
    }
    for (const auto& k : DequantizeUkernels<T>()) {
      benchmark::RegisterBenchmark(fmt::format("{}/n:{}", k.name, n).c_str(),
                                   [k, n](benchmark::State& s) { BenchDequantize<T>(s, k, n); })
          ->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  std::string shapes = OCTET_BENCH_SHAPES_DIR "/quantize.txt";
  if (!octet::bench::InitializeWithShapes(argc, argv, shapes)) return 2;
  std::vector<int64_t> sizes =
      octet::bench::ValueOrExit(octet::bench::ReadElementCounts(shapes), "octet_bench_quantize");
  sizes.insert(sizes.begin(), octet::kL1Elements);
  octet::RegisterFamilies<uint8_t>(sizes);
  octet::RegisterFamilies<int8_t>(sizes);
  octet::RegisterFamilies<int32_t>(sizes);
  for (int64_t n : sizes) {
    for (int64_t bpe : {5, 8}) {
      benchmark::RegisterBenchmark(fmt::format("memcpy/n:{}/bytes_per_element:{}", n, bpe).c_str(),
                                   [n, bpe](benchmark::State& s) { octet::BenchMemcpy(s, n, bpe); })
          ->UseRealTime();
    }
  }
  return octet::bench::RunRegisteredBenchmarks();
}
