// Shared test helpers.
#include "tests/test_util.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <functional>
#include <mutex>

#include "core/executor.h"
#include "io/npy.h"
#include "quant/training/top1.h"

namespace octet::testing {
namespace {
std::mutex g_mutex;
std::vector<std::string>& Skipped() {
  static std::vector<std::string> s;
  return s;
}
std::vector<int64_t>& CaseCounts() {
  static std::vector<int64_t> c(std::size(kAllIsas), 0);
  return c;
}
}  // namespace

std::mt19937_64 MakeRng(std::string_view salt) {
  const uint64_t h = std::hash<std::string_view>{}(salt);
  return std::mt19937_64(uint64_t{Catch::rngSeed()} * 0x9E3779B97F4A7C15ull ^ h);
}

void Skip(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& s : Skipped()) {
      if (s == what) return;
    }
    Skipped().push_back(what);
  }
  WARN("SKIPPED (not runnable here): " << what);
}

std::vector<std::string> SkippedVariants() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return Skipped();
}

Context ContextFor(Isa isa, int threads) { return Context::ForIsas(IsaSet::Of({isa, Isa::kScalar}), threads); }

bool CanRun(Isa isa, std::string_view what) {
  if (DetectedIsas().Contains(isa)) {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++CaseCounts()[static_cast<size_t>(isa)];
    return true;
  }
  Skip(std::string(what) + " (ISA " + IsaName(isa) + " not available on this CPU)");
  return false;
}

size_t RandomSize(std::mt19937_64& rng, size_t max) {
  // log-uniform in [1, max], then a nudge of -1/0/+1 to land on and around powers of two and tile edges.
  std::uniform_real_distribution<double> u(0.0, std::log2(static_cast<double>(max)));
  size_t n = static_cast<size_t>(std::exp2(u(rng)));
  const int nudge = static_cast<int>(rng() % 3) - 1;
  if (nudge < 0 && n > 1) --n;
  if (nudge > 0 && n < max) ++n;
  return n;
}

std::vector<Isa> CompiledIsaList() { return CompiledIsas().ToVector(); }

std::vector<int64_t> IsaCaseCounts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return CaseCounts();
}

Tensor RandomTensor(std::mt19937_64& rng, const Shape& shape, float lo, float hi) {
  Tensor t = Tensor::Create(DType::kF32, shape).value();
  std::uniform_real_distribution<float> u(lo, hi);
  for (float& v : t.values<float>()) v = u(rng);
  return t;
}

double TensorSqnrDb(const Tensor& reference, const Tensor& test) {
  double s = 0, e = 0;
  for (int64_t i = 0; i < reference.NumElements(); ++i) {
    const double a = reference.data<float>()[i], b = test.data<float>()[i];
    s += a * a;
    e += (a - b) * (a - b);
  }
  return e == 0 ? 1e9 : 10 * std::log10(s / e);
}

Tensor RunFirstOutput(const Graph& graph, const Context& context, const OpRegistry& registry, const Tensor& x) {
  auto exec = Executor::Compile(graph, context, registry);
  INFO(exec.status().message());
  REQUIRE(exec.ok());
  auto y = exec->Run(std::vector<Tensor>{x});
  INFO(y.status().message());
  REQUIRE(y.ok());
  return (*y)[0];
}

std::vector<Tensor> RunWithInputShapes(const Graph& graph, const Context& context, const OpRegistry& registry,
                                       const std::vector<Tensor>& inputs) {
  CompileOptions options;
  for (size_t i = 0; i < inputs.size(); ++i) {
    options.input_shapes.emplace_back(graph.value(graph.inputs()[i]).name, inputs[i].shape());
  }
  auto exec = Executor::Compile(graph, context, registry, options);
  INFO(exec.status().message());
  REQUIRE(exec.ok());
  auto y = exec->Run(inputs);
  INFO(y.status().message());
  REQUIRE(y.ok());
  return *std::move(y);
}

const Context& ScalarContext() {
  static const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  return context;
}

std::vector<Tensor> ReadNumberedNpy(const std::string& prefix, const std::string& kind) {
  std::vector<Tensor> ts;
  for (int k = 0;; ++k) {
    const std::string path = prefix + "." + kind + std::to_string(k) + ".npy";
    if (!std::filesystem::exists(path)) break;
    ts.push_back(ReadNpy(path).value());
  }
  return ts;
}

Tensor DigitsImages(const std::string& file, bool cnn) {
  Tensor x = ReadNpy(kModels + file).value();
  REQUIRE(x.shape().rank() == 2);
  if (!cnn) return x;
  return x.Reshaped(Shape{x.shape().dim(0), 1, 8, 8}).value();
}

double Top1Percent(const Tensor& logits, std::span<const int64_t> labels) {
  REQUIRE(!labels.empty());
  const auto right = training::CountTop1(logits, labels);
  REQUIRE(right.ok());
  return 100.0 * static_cast<double>(*right) / static_cast<double>(labels.size());
}

double Top1Percent(const Tensor& logits, const Tensor& labels) {
  REQUIRE(labels.dtype() == DType::kS32);
  const std::vector<int64_t> wide(labels.data<int32_t>(), labels.data<int32_t>() + labels.NumElements());
  return Top1Percent(logits, wide);
}

std::vector<std::vector<Tensor>> NormalBatches(const Shape& shape, int count, uint32_t seed) {
  std::vector<std::vector<Tensor>> batches;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int b = 0; b < count; ++b) {
    Tensor x = Tensor::Create(DType::kF32, shape).value();
    for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = normal(rng);
    batches.push_back({x});
  }
  return batches;
}

}  // namespace octet::testing
