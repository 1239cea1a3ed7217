// Prepare and Calibrate on builder graphs: observers sit where the mapping says, shared along share-qparams ops,
// and after calibration hold exactly the ranges computed directly from the float graph's activations.
#include <catch2/catch.hpp>

#include "core/builder.h"
#include "ops/float/registry.h"
#include "quant/calibrate.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::MinMaxOf;
using testing::RandomTensor;

// x86's layout with MinMax activations, so observed ranges can be checked exactly.
QConfig CalibrateMinMaxQConfig() { return testing::X86QConfig(ObserverKind::kMinMax); }

std::vector<std::vector<Tensor>> Batches(std::mt19937_64& rng, int n, const Shape& shape) {
  std::vector<std::vector<Tensor>> b;
  for (int i = 0; i < n; ++i) b.push_back({RandomTensor(rng, shape, -1.5f + 0.2f * i, 1.0f + 0.3f * i)});
  return b;
}

TEST_CASE("Calibrated ranges equal the float graph's activations", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("prepare_small_cnn");
  const Graph original = testing::SmallCnn(rng());
  QConfigMapping mapping;
  mapping.SetGlobal(CalibrateMinMaxQConfig());
  auto prepared = Prepare(original, mapping);
  REQUIRE(prepared.ok());
  const Graph& g = prepared->graph();
  // Batches of different sizes: the Context overload compiles once per shape.
  std::vector<std::vector<Tensor>> batches = Batches(rng, 3, Shape{4, 3, 8, 8});
  batches.push_back({RandomTensor(rng, Shape{1, 3, 8, 8}, -0.5f, 2.5f)});
  std::vector<std::pair<int64_t, int64_t>> progress;
  CalibrateOptions co;
  co.progress = [&](int64_t done, int64_t total) { progress.emplace_back(done, total); };
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  REQUIRE(Calibrate(*prepared, context, batches, co).ok());
  CHECK(progress == std::vector<std::pair<int64_t, int64_t>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}});

  // The direct computation: the unfused float graph's values ("relu1" is what the fused conv1 produces).
  const std::vector<std::string> names = {"x", "relu1", "pool1", "flatten", "relu2", "fc2"};
  auto seen = testing::RunAndRecord(original, FloatOpRegistry(), batches, names);
  for (const char* name : {"x", "relu2", "fc2"}) {
    INFO(name);
    const Observer* obs = prepared->FindObserver(name);
    REQUIRE(obs != nullptr);
    const auto [lo, hi] = MinMaxOf(seen[name]);
    REQUIRE(obs->min_val().size() == 1);
    CHECK(lo < hi);
    if (std::string(name) == "x") {  // the input is observed as given: exact
      CHECK(obs->min_val()[0] == lo);
      CHECK(obs->max_val()[0] == hi);
    } else {  // downstream of the folded conv1, whose weights round differently from Conv then BatchNorm
      CHECK(obs->min_val()[0] == Approx(lo).epsilon(1e-5));
      CHECK(obs->max_val()[0] == Approx(hi).epsilon(1e-5));
    }
  }
  // relu1 -> pool1 -> flatten share one observer (MaxPool and Flatten keep their input's qparams). Its range is
  // relu1's, which went through the folded (slightly differently rounded) conv: compare with a tolerance.
  const Observer* shared = prepared->FindObserver("relu1");
  REQUIRE(shared != nullptr);
  CHECK(prepared->FindObserver("pool1") == shared);
  CHECK(prepared->FindObserver("flatten") == shared);
  const auto [lo1, hi1] = MinMaxOf(seen["relu1"]);
  CHECK(lo1 == 0.0f);
  CHECK(shared->min_val()[0] == 0.0f);
  CHECK(shared->max_val()[0] == Approx(hi1).epsilon(1e-5));
  // fc1's output is fused into relu2: no observer between them.
  CHECK(prepared->FindObserver("fc1") == nullptr);

  // Weights: per channel along the output channels, on the folded weights.
  const Observer* wfc = prepared->FindObserver("fc1.weight");
  REQUIRE(wfc != nullptr);
  const Tensor& w = g.value(g.FindValue("fc1.weight")).data;
  REQUIRE(wfc->min_val().size() == 16);
  for (int64_t o = 0; o < 16; ++o) {
    float lo = w.data<float>()[o * 128], hi = lo;
    for (int64_t k = 0; k < 128; ++k) {
      lo = std::min(lo, w.data<float>()[o * 128 + k]);
      hi = std::max(hi, w.data<float>()[o * 128 + k]);
    }
    CHECK(wfc->min_val()[o] == lo);
    CHECK(wfc->max_val()[o] == hi);
  }
  const Observer* wconv = prepared->FindObserver("conv1.weight");
  REQUIRE(wconv != nullptr);
  CHECK(wconv->min_val().size() == 8);
  CHECK(prepared->FindObserver("conv1.bias") == nullptr);  // biases become int32 at Convert

  auto qparams = prepared->CalculateQParams();
  REQUIRE(qparams.ok());
  const QParams& qx = qparams->at("x");
  const auto [xlo, xhi] = MinMaxOf(seen["x"]);
  CHECK(qx.quant_max() == 127);  // x86: reduce_range
  CHECK(qx.scale() == Approx((xhi - xlo) / 127.0f).epsilon(1e-6));
  CHECK(qparams->at("pool1").scale() == qparams->at("relu1").scale());
  CHECK(qparams->at("fc1.weight").per_channel());
  CHECK(qparams->at("fc1.weight").num_channels() == 16);
}

TEST_CASE("A none entry keeps a node float; dynamic qconfigs observe weights only", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("prepare_mapping");
  const Graph original = testing::SmallCnn(rng());
  QConfigMapping mapping;
  mapping.SetGlobal(CalibrateMinMaxQConfig())
      .SetModuleName("fc2", std::nullopt)
      .SetModuleName("fc1", GetDefaultDynamicQConfig());
  auto prepared = Prepare(original, mapping);
  REQUIRE(prepared.ok());
  const Graph& g = prepared->graph();
  CHECK_FALSE(prepared->node_qconfig(g.FindNode("fc2")).has_value());
  CHECK(prepared->FindObserver("fc2") == nullptr);
  CHECK(prepared->FindObserver("fc2.weight") == nullptr);
  CHECK(prepared->node_qconfig(g.FindNode("fc1"))->is_dynamic());
  CHECK(prepared->FindObserver("fc1.weight") != nullptr);
  CHECK(prepared->FindObserver("relu2") == nullptr);  // fc1's (fused) output: dynamic, float out
  CHECK(prepared->FindObserver("flatten") != nullptr);  // still observed for the static Flatten
  // Before calibration, activation qparams cannot be computed: the error names the value.
  auto early = prepared->CalculateQParams();
  REQUIRE_FALSE(early.ok());
  CHECK_THAT(early.status().message(), Catch::Contains("'x'") && Catch::Contains("Calibrate"));
}

TEST_CASE("Concat shares one observer across its inputs and output; Add observes each operand", "[quant]") {
  GraphBuilder b("branches", 5);
  ValueId x = b.Input("x", DType::kF32, Shape{2, 6});
  ValueId a = b.Linear("a", x, 6, 4);
  ValueId c = b.Linear("c", x, 6, 4);
  ValueId cat = b.Concat("cat", {a, c}, 1);
  ValueId s = b.Add("add", a, c);
  b.Output(cat);
  b.Output(s);
  const Graph graph = std::move(b).Build().value();
  QConfigMapping mapping;
  mapping.SetGlobal(CalibrateMinMaxQConfig());
  auto prepared = Prepare(graph, mapping);
  REQUIRE(prepared.ok());
  const Observer* oa = prepared->FindObserver("a");
  CHECK(oa != nullptr);
  CHECK(prepared->FindObserver("c") == oa);
  CHECK(prepared->FindObserver("cat") == oa);
  CHECK(prepared->FindObserver("add") != oa);
  std::mt19937_64 rng = testing::MakeRng("concat_batches");
  const auto batches = Batches(rng, 2, Shape{2, 6});
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  testing::CalibrateQuietly(*prepared, batches, context);
  auto seen = testing::RunAndRecord(graph, FloatOpRegistry(), batches, {"cat", "add"});
  CHECK(oa->min_val()[0] == MinMaxOf(seen["cat"]).first);
  CHECK(oa->max_val()[0] == MinMaxOf(seen["cat"]).second);
  CHECK(prepared->FindObserver("add")->max_val()[0] == MinMaxOf(seen["add"]).second);
}

TEST_CASE("Calibrate rejects an executor of another graph and a wrong batch", "[quant]") {
  const Graph original = testing::SmallCnn(1);
  QConfigMapping mapping;
  mapping.SetGlobal(CalibrateMinMaxQConfig());
  auto prepared = Prepare(original, mapping);
  REQUIRE(prepared.ok());
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  CompileOptions co;
  co.input_shapes = {{"x", Shape{1, 3, 8, 8}}};
  auto unfused = Executor::Compile(original, context, FloatOpRegistry(), co);
  REQUIRE(unfused.ok());
  std::mt19937_64 rng(2);
  const auto batches = Batches(rng, 1, Shape{1, 3, 8, 8});
  const Status s = Calibrate(*prepared, *unfused, batches);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("another graph"));
  const std::vector<std::vector<Tensor>> two = {{batches[0][0], batches[0][0]}};
  const Status s2 = Calibrate(*prepared, context, two);
  REQUIRE_FALSE(s2.ok());
  CHECK_THAT(s2.message(), Catch::Contains("2 tensors"));
}

TEST_CASE("SplitBatches splits samples along axis 0", "[quant]") {
  std::vector<float> v(5 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor t = Tensor::FromValues<float>(Shape{5, 3}, v).value();
  auto parts = SplitBatches(t, 2);
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 3);
  CHECK((*parts)[2].shape() == Shape{1, 3});
  CHECK((*parts)[1].data<float>()[0] == 6.0f);
  CHECK((*parts)[2].data<float>()[2] == 14.0f);
  CHECK_FALSE(SplitBatches(t, 0).ok());
}

}  // namespace
}  // namespace octet
