// Quantization that never silently breaks a model (issue 21): each case
// reproduces a failure seen on third-party models on a small builder graph and
// checks it now works, or is refused with a message naming the fix.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "core/builder.h"
#include "core/executor.h"
#include "observers/histogram_observer.h"
#include "ops/float/registry.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/observers/observer_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::RandomTensor;

const Context &ScalarContext() {
  static const Context c = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  return c;
}

// Runs `g` on each input with `registry`; one output tensor per input.
std::vector<Tensor> RunEach(const Graph &g, const OpRegistry &registry, const std::vector<Tensor> &inputs) {
  std::vector<Tensor> out;
  for (const Tensor &x : inputs) {
    CompileOptions co;
    co.input_shapes.emplace_back(g.value(g.inputs()[0]).name, x.shape());
    auto exec = Executor::Compile(g, ScalarContext(), registry, co);
    REQUIRE(exec.ok());
    auto y = exec->Run(std::vector<Tensor>{x});
    if (!y.ok()) FAIL(y.status().ToString());
    out.push_back(std::move((*y)[0]));
  }
  return out;
}

double SqnrDb(const std::vector<Tensor> &ref, const std::vector<Tensor> &test) {
  double signal = 0.0, noise = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    for (int64_t k = 0; k < ref[i].NumElements(); ++k) {
      const double r = ref[i].data<float>()[k], t = test[i].data<float>()[k];
      signal += r * r;
      noise += (r - t) * (r - t);
    }
  }
  return 10.0 * std::log10(signal / noise);
}

// ---- batch-1 calibration of one-element tensors (the default, 1.13 histogram)
// ----

TEST_CASE("legacy_1_13 HistogramObserver keeps every one-element sample at batch 1", "[robust]") {
  ObserverOptions o;
  o.histogram_variant = HistogramVariant::kLegacy113;
  auto h = HistogramObserver::Create(o).value();
  std::mt19937_64 rng = testing::MakeRng("one element histogram");
  std::normal_distribution<float> d(1.5f, 2.0f);
  float lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < 200; ++i) {
    const float v = d(rng);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    testing::ObserveOrFail(*h, {v});
  }
  // 1.13 starts over after every constant state and ends with the last sample
  // alone.
  CHECK(h->min_val()[0] == lo);
  CHECK(h->max_val()[0] >= hi);
  double total = 0.0;
  for (float c : h->histogram()) total += c;
  CHECK(total == 200.0);
  // The chosen range covers the bulk of the samples, not one of them.
  const QParams q = h->CalculateQParams().value();
  const float covered = q.scales()[0] * static_cast<float>(q.quant_max() - q.quant_min());
  CHECK(covered > 0.5f * (hi - lo));
}

TEST_CASE(
    "A one-element output head calibrated at batch 1 tracks the float "
    "model (x86 default)",
    "[robust]") {
  std::mt19937_64 rng = testing::MakeRng("one element head");
  GraphBuilder b("detector", rng());
  ValueId x = b.Input("x", DType::kF32, Shape{1, 8});
  x = b.Linear("fc1", x, 8, 16);
  x = b.ReLU("relu", x);
  x = b.Linear("score", x, 16, 1);
  b.Output(x);
  const Graph g = std::move(b).Build().value();
  std::vector<std::vector<Tensor>> calib;
  std::vector<Tensor> test;
  for (int i = 0; i < 64; ++i) calib.push_back({RandomTensor(rng, Shape{1, 8}, -2.0f, 2.0f)});
  for (int i = 0; i < 64; ++i) test.push_back(RandomTensor(rng, Shape{1, 8}, -2.0f, 2.0f));
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultQConfig("x86").value());
  auto prepared = Prepare(g, mapping);
  REQUIRE(prepared.ok());
  REQUIRE(Calibrate(*prepared, ScalarContext(), calib).ok());
  auto q = Convert(*prepared);
  REQUIRE(q.ok());
  const std::vector<Tensor> ref = RunEach(g, QuantFloatRegistry(), test);
  const std::vector<Tensor> got = RunEach(*q, QuantizedGraphRegistry(), test);
  std::set<float> distinct;
  for (const Tensor &t : got) distinct.insert(t.data<float>()[0]);
  CHECK(distinct.size() > 16);  // was one value (the last calibration sample's
                                // range clipped everything)
  CHECK(SqnrDb(ref, got) > 20.0);
}

}  // namespace
}  // namespace octet
