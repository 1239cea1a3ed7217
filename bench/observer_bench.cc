// Google Benchmark of the observers: the min/max kernels and MinMaxObserver::Observe on 64 MiB beside a memcpy of
// 64 MiB (the DESIGN.md §9 target: observation near memory bandwidth), and every observer over 50 batches of
// 8x64x56x56 (the HistogramObserver target: >= 20x PyTorch 1.13, which bench/observers_pytorch.py measures with
// the same data recipe and compares in the same run).
//
// Rates use wall-clock time. bytes_per_second: bytes read by the observer (4 per element); memcpy/bytes:B reports
// the bytes it copies per second (B per call), so kernel bytes_per_second / memcpy bytes_per_second is the ratio the
// target speaks of. Each min/max kernel is checked once against the scalar kernel before it is timed (a difference
// makes the program exit 1); a kernel whose ISA this CPU lacks is reported as an error, never timed.
//
//   octet_bench_observers [--benchmark_filter=...] [--benchmark_format=json]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/harness/gbench_util.h"
#include "core/context.h"
#include "core/cpu_features.h"
#include "core/tensor.h"
#include "observers/kernels/histogram.h"
#include "observers/kernels/minmax.h"
#include "observers/observer_factory.h"

namespace octet {
namespace {

constexpr int64_t k64MiBFloats = int64_t{16} << 20;
constexpr int kBatches = 50;
const Shape kBatchShape{8, 64, 56, 56};

Tensor MakeTensor(DType dtype, int64_t n) {
  Result<Tensor> t = Tensor::Create(dtype, Shape{n});
  OCTET_CHECK(t.ok());
  return std::move(t).value();
}

// Normal values (xorshift + Box-Muller), mean 0, standard deviation sigma.
void FillNormal(std::span<float> x, uint32_t seed, float sigma) {
  uint32_t s = seed | 1u;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return (static_cast<float>(s >> 8) + 0.5f) * (1.0f / 16777216.0f);
  };
  for (size_t i = 0; i + 1 < x.size(); i += 2) {
    const float r = std::sqrt(-2.0f * std::log(next()));
    const float t = 6.2831853f * next();
    x[i] = sigma * r * std::cos(t);
    x[i + 1] = sigma * r * std::sin(t);
  }
  if (x.size() % 2 == 1) x.back() = 0.0f;
}

// The batches the PyTorch script uses too: four distinct tensors N(0, (1 + 0.02 k)^2), cycled over 50 batches.
const std::vector<Tensor>& Batches() {
  static const std::vector<Tensor> batches = [] {
    std::vector<Tensor> b;
    for (int k = 0; k < 4; ++k) {
      Result<Tensor> t = Tensor::Create(DType::kF32, kBatchShape);
      OCTET_CHECK(t.ok());
      const float sigma = 1.0f + 0.02f * static_cast<float>(k);
      FillNormal(t->values<float>(), 0x1234567u + 977u * static_cast<uint32_t>(k), sigma);
      b.push_back(std::move(t).value());
    }
    return b;
  }();
  return batches;
}

void BenchMinMaxKernel(benchmark::State& state, const UkernelEntry<MinMaxUkernelFn>& kernel, int64_t n) {
  if (!bench::SkipUnlessDetected(state, kernel.isa)) return;
  Tensor x = MakeTensor(DType::kF32, n);
  FillNormal(x.values<float>(), 99u, 3.0f);
  const float* xp = x.data<float>();
  const MinMaxResult want = minmax_f32_ukernel__scalar(static_cast<size_t>(n), xp);
  const MinMaxResult got = kernel.fn(static_cast<size_t>(n), xp);
  if (got.min != want.min || got.max != want.max || got.nonfinite != want.nonfinite) {
    return bench::ReportMismatch(state, "octet_bench_observers",
                                 fmt::format("{} differs from the scalar kernel: [{}, {}] vs [{}, {}]", kernel.name,
                                             got.min, got.max, want.min, want.max));
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernel.fn(static_cast<size_t>(n), xp));
  }
  state.SetBytesProcessed(state.iterations() * n * 4);
  state.SetLabel(IsaName(kernel.isa));
}

void BenchMemcpy(benchmark::State& state, int64_t bytes) {
  Tensor src = MakeTensor(DType::kU8, bytes);
  Tensor dst = MakeTensor(DType::kU8, bytes);
  std::memset(src.raw_data(), 0x5a, static_cast<size_t>(bytes));
  std::memset(dst.raw_data(), 0, static_cast<size_t>(bytes));
  for (auto _ : state) {
    std::memcpy(dst.raw_data(), src.raw_data(), static_cast<size_t>(bytes));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetLabel("memcpy (bytes copied)");
}

// Observer::Observe on one 64 MiB tensor with the detected ISAs.
void BenchMinMaxObserve(benchmark::State& state, int threads) {
  ContextOptions context_options;
  context_options.threads = threads;
  Result<Context> context = Context::Create(context_options);
  OCTET_CHECK(context.ok());
  Result<Tensor> x = Tensor::Create(DType::kF32, Shape{k64MiBFloats});
  OCTET_CHECK(x.ok());
  FillNormal(x->values<float>(), 7u, 2.0f);
  auto o = MakeObserver(ObserverKind::kMinMax);
  OCTET_CHECK(o.ok());
  (*o)->set_context(&*context);
  for (auto _ : state) {
    OCTET_CHECK((*o)->Observe(*x, "x").ok());
  }
  state.SetBytesProcessed(state.iterations() * k64MiBFloats * 4);
  state.SetLabel(context->LastKernel("minmax_f32"));
}

// The floor of the counting method on the same 50 batches, one thread: only the `counts[bin] += 1` of every element
// (into kHistogramCopies interleaved copies, as the histogram kernels count), over bins computed before timing.
// Every exact histogram pays one such increment per element, so PyTorch's time over this one bounds the speed-up a
// single core can give (issue 19); bins come from the range [-8, 8] in 2048 bins, like the observer's.
void BenchHistogramCountingFloor(benchmark::State& state) {
  constexpr uint32_t kBins = 2048;
  const auto& batches = Batches();
  // The slots live in tensors, so that they get the same pages (huge pages where Linux gives them) as the batches.
  std::vector<Tensor> slots;
  for (const Tensor& t : batches) {
    Tensor st = MakeTensor(DType::kS32, t.NumElements());
    const std::span<int32_t> s = st.values<int32_t>();
    const std::span<const float> x = t.values<float>();
    for (size_t i = 0; i < s.size(); ++i) {
      const float b = std::floor((x[i] + 8.0f) * (static_cast<float>(kBins) / 16.0f));
      const uint32_t bin = b < 0.0f ? 0u : (b >= static_cast<float>(kBins) ? kBins - 1 : static_cast<uint32_t>(b));
      s[i] = static_cast<int32_t>(static_cast<uint32_t>(i % kHistogramCopies) * (kBins + 1) + bin + 1);
    }
    slots.push_back(std::move(st));
  }
  std::vector<uint32_t> counts(kHistogramCopies * (kBins + 1));
  for (auto _ : state) {
    std::fill(counts.begin(), counts.end(), 0u);
    for (int b = 0; b < kBatches; ++b) {
      const Tensor& s = slots[static_cast<size_t>(b % 4)];
      const uint32_t* p = reinterpret_cast<const uint32_t*>(s.data<int32_t>());
      const size_t n = static_cast<size_t>(s.NumElements());
#pragma GCC unroll 16
      for (size_t i = 0; i < n; ++i) counts[p[i]] += 1;
    }
    benchmark::DoNotOptimize(counts.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBatches * kBatchShape.NumElements() * 4);
  state.counters["threads"] = 1;
}

// The same increments with their slots resident in L1 (the first 8192 slots of a batch, counted over and over, as
// many increments in all): the rate of the increment alone, with no memory stream behind it. PyTorch's time over
// this one is the most one core can give by any method that pays one increment per element (issue 19).
void BenchHistogramCountingBound(benchmark::State& state) {
  constexpr uint32_t kBins = 2048;
  constexpr size_t kResident = 8192;
  const std::span<const float> x = Batches()[0].values<float>();
  std::vector<uint32_t> s(kResident);
  for (size_t i = 0; i < kResident; ++i) {
    const float b = std::floor((x[i] + 8.0f) * (static_cast<float>(kBins) / 16.0f));
    const uint32_t bin = b < 0.0f ? 0u : (b >= static_cast<float>(kBins) ? kBins - 1 : static_cast<uint32_t>(b));
    s[i] = static_cast<uint32_t>(i % kHistogramCopies) * (kBins + 1) + bin + 1;
  }
  const size_t total = static_cast<size_t>(kBatches) * static_cast<size_t>(kBatchShape.NumElements());
  std::vector<uint32_t> counts(kHistogramCopies * (kBins + 1));
  for (auto _ : state) {
    std::fill(counts.begin(), counts.end(), 0u);
    const uint32_t* p = s.data();
    for (size_t done = 0; done < total; done += kResident) {
      const size_t n = std::min(kResident, total - done);
#pragma GCC unroll 16
      for (size_t i = 0; i < n; ++i) counts[p[i]] += 1;
      benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(counts.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBatches * kBatchShape.NumElements() * 4);
  state.counters["threads"] = 1;
}

// One iteration: a fresh observer, 50 batches observed, then (`qparams`) CalculateQParams.
void BenchObserver(benchmark::State& state, ObserverKind kind, ObserverOptions options, int threads, bool qparams) {
  ContextOptions context_options;
  context_options.threads = threads;
  Result<Context> context = Context::Create(context_options);
  OCTET_CHECK(context.ok());
  const auto& batches = Batches();
  for (auto _ : state) {
    auto o = MakeObserver(kind, options);
    OCTET_CHECK(o.ok());
    (*o)->set_context(&*context);
    for (int b = 0; b < kBatches; ++b) OCTET_CHECK((*o)->Observe(batches[static_cast<size_t>(b % 4)], "x").ok());
    if (qparams) {
      auto q = (*o)->CalculateQParams();
      OCTET_CHECK(q.ok());
      benchmark::DoNotOptimize(q->scale());
    }
  }
  state.SetBytesProcessed(state.iterations() * kBatches * kBatchShape.NumElements() * 4);
  state.counters["threads"] = threads;
}

void Register() {
  for (const auto& k : MinMaxUkernels()) {
    benchmark::RegisterBenchmark(fmt::format("{}/n:{}", k.name, k64MiBFloats).c_str(),
                                 [&k](benchmark::State& s) { BenchMinMaxKernel(s, k, k64MiBFloats); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark(fmt::format("memcpy/bytes:{}", k64MiBFloats * 4).c_str(),
                               [](benchmark::State& s) { BenchMemcpy(s, k64MiBFloats * 4); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  for (int threads : {1, 2}) {
    benchmark::RegisterBenchmark(fmt::format("MinMaxObserver/observe/n:{}/threads:{}", k64MiBFloats, threads).c_str(),
                                 [threads](benchmark::State& s) { BenchMinMaxObserve(s, threads); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("HistogramCountingFloor/batches:50/shape:8x64x56x56/threads:1",
                               BenchHistogramCountingFloor)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("HistogramCountingBound/batches:50/shape:8x64x56x56/threads:1",
                               BenchHistogramCountingBound)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  struct Case {
    std::string name;
    ObserverKind kind;
    ObserverOptions options;
  };
  std::vector<Case> cases;
  ObserverOptions legacy;
  legacy.histogram_variant = HistogramVariant::kLegacy113;
  cases.push_back({"HistogramObserver_legacy_1_13", ObserverKind::kHistogram, legacy});
  cases.push_back({"HistogramObserver_upstream", ObserverKind::kHistogram, {}});
  cases.push_back({"MinMaxObserver", ObserverKind::kMinMax, {}});
  cases.push_back({"MovingAverageMinMaxObserver", ObserverKind::kMovingAverageMinMax, {}});
  cases.push_back({"PercentileObserver", ObserverKind::kPercentile, {}});
  cases.push_back({"EntropyObserver", ObserverKind::kEntropy, {}});
  cases.push_back({"MseObserver", ObserverKind::kMse, {}});
  for (const Case& c : cases) {
    for (int threads : {1, 2}) {
      for (bool qparams : {false, true}) {
        benchmark::RegisterBenchmark(fmt::format("{}/{}/batches:{}/shape:8x64x56x56/threads:{}", c.name,
                                                 qparams ? "observe+qparams" : "observe", kBatches, threads)
                                         .c_str(),
                                     [c, threads, qparams](benchmark::State& s) {
                                       BenchObserver(s, c.kind, c.options, threads, qparams);
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  octet::Register();
  return octet::bench::RunRegisteredBenchmarks();
}
