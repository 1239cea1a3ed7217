// ConvBn simulated folding (quant/qat/conv_bn.h) and the QAT model around it: in eval mode the rewritten unit
// computes Conv + BatchNormalization (and the folded Conv); in training mode its outputs, running statistics and
// parameter gradients equal those of the plain Conv + BatchNormalization (the rewrite only changes where the weight
// is scaled); and after ConvertQat the int8 Conv computes what the QAT model's fake-quant forward simulated.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/builder.h"
#include "core/executor.h"
#include "ops/float/registry.h"
#include "quant/fold_batch_norm.h"
#include "quant/qat/conv_bn.h"
#include "quant/qat/convert_qat.h"
#include "quant/qat/prepare_qat.h"
#include "quant/quantized_registry.h"
#include "quant/training/parameter_init.h"
#include "quant/training/training_graph.h"
#include "tests/test_util.h"

namespace octet {
namespace {

constexpr int64_t kChannels = 4;

// x [N, 3, 6, 6] -> Conv(3 -> 4, 3x3, pad 1) -> BatchNormalization (-> Relu) with non-trivial statistics, one
// negative gamma and positive betas.
Graph ConvBnGraph(std::mt19937_64& rng, bool relu) {
  GraphBuilder b("conv_bn", 0);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 3, 6, 6});
  ValueId h =
      b.Conv2d("conv", x, {.in_channels = 3, .out_channels = kChannels, .kernel_size = {3, 3}, .padding = {1, 1}});
  h = b.BatchNorm2d("bn", h, kChannels);
  if (relu) h = b.ReLU("relu", h);
  b.Output(h);
  Graph g = std::move(b).Build().value();
  REQUIRE(training::ResetParameters(g, rng()).ok());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const Node& bn = g.node(g.FindNode("bn"));
  for (size_t s = 1; s < 5; ++s) {
    Tensor& t = g.mutable_value(bn.inputs[s]).data;
    for (int64_t c = 0; c < t.NumElements(); ++c) {
      float v = u(rng);
      if (s == 1) v = (c == 1 ? -1.0f : 1.0f) * (0.5f + std::abs(v));  // gamma, one negative
      if (s == 2) v = 0.2f + 0.5f * std::abs(v);                      // beta: a Relu keeps a good part
      if (s == 4) v = 0.3f + std::abs(v);                             // running_var
      t.data<float>()[c] = v;
    }
  }
  return g;
}

Tensor RandomInput(std::mt19937_64& rng, int64_t n) {
  Tensor x = Tensor::Create(DType::kF32, Shape{n, 3, 6, 6}).value();
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = d(rng);
  return x;
}

Tensor RunFloat(const Graph& g, const OpRegistry& r, const Tensor& x) {
  return testing::RunWithInputShapes(g, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1), r, {x})[0];
}

// |a - b| <= tolerance * max(max |a|, floor) everywhere, naming the first element beyond. `floor` keeps values that
// are zero up to rounding (the gradient of a bias in front of a training-mode BatchNormalization) from setting the
// scale.
void CheckClose(const Tensor& a, const Tensor& b, float tolerance, const std::string& what, float floor = 0.0f) {
  REQUIRE(a.shape() == b.shape());
  float scale = floor;
  for (int64_t i = 0; i < a.NumElements(); ++i) scale = std::max(scale, std::abs(a.data<float>()[i]));
  REQUIRE(scale > 0.0f);
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    INFO(what << " element " << i << ": " << a.data<float>()[i] << " vs " << b.data<float>()[i]);
    REQUIRE(std::abs(a.data<float>()[i] - b.data<float>()[i]) <= tolerance * scale);
  }
}

training::TrainingGraphOptions RewrittenParameters(const std::vector<qat::ConvBnUnit>& units) {
  training::TrainingGraphOptions o;
  for (const qat::ConvBnUnit& u : units) {
    o.extra_parameters.push_back(u.weight);
    if (!u.bias.empty()) o.extra_biases.push_back(u.bias);
  }
  return o;
}

TEST_CASE("ConvBn simulated folding equals Conv + BatchNormalization in eval mode and the folded Conv", "[qat]") {
  std::mt19937_64 rng = testing::MakeRng("qat conv_bn eval");
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  const Graph original = ConvBnGraph(rng, false);
  const Tensor x = RandomInput(rng, 5);
  const Tensor expected = RunFloat(original, FloatOpRegistry(), x);

  Graph rewritten = original;
  const std::vector<qat::ConvBnUnit> units = qat::RewriteConvBnForQat(rewritten).value();
  REQUIRE(units.size() == 1);
  CHECK(units[0].conv == "conv");
  CHECK(units[0].batch_norm == "bn");
  CHECK(units[0].weight == "conv.weight");
  CHECK(units[0].bias == "conv.bias");
  auto tg = training::TrainingGraph::Create(rewritten, context, RewrittenParameters(units));
  INFO(tg.status().message());
  REQUIRE(tg.ok());
  const Tensor inputs[] = {x};
  const Tensor simulated = tg->Forward(inputs, training::Mode::kEval).value()[0];
  CheckClose(expected, simulated, 1e-5f, "eval ConvBn vs Conv + BatchNormalization");

  Graph folded = original;
  REQUIRE(FoldBatchNorm(folded).value().size() == 1);
  CheckClose(RunFloat(folded, FloatOpRegistry(), x), simulated, 1e-5f, "eval ConvBn vs folded Conv");
}

TEST_CASE("ConvBn simulated folding trains like Conv + BatchNormalization (outputs, statistics, gradients)", "[qat]") {
  std::mt19937_64 rng = testing::MakeRng("qat conv_bn training");
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  const Graph original = ConvBnGraph(rng, true);
  Graph rewritten = original;
  const std::vector<qat::ConvBnUnit> units = qat::RewriteConvBnForQat(rewritten).value();
  REQUIRE(units.size() == 1);
  auto plain = training::TrainingGraph::Create(original, context);
  auto unit = training::TrainingGraph::Create(rewritten, context, RewrittenParameters(units));
  REQUIRE(plain.ok());
  REQUIRE(unit.ok());
  REQUIRE(plain->parameters().size() == unit->parameters().size());
  for (int step = 0; step < 2; ++step) {
    const Tensor inputs[] = {RandomInput(rng, 6)};
    const Tensor y0 = plain->Forward(inputs, training::Mode::kTraining).value()[0];
    const Tensor y1 = unit->Forward(inputs, training::Mode::kTraining).value()[0];
    CheckClose(y0, y1, 1e-5f, "training-mode output");
    Tensor dy = Tensor::Create(DType::kF32, y0.shape()).value();
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (int64_t i = 0; i < dy.NumElements(); ++i) dy.data<float>()[i] = d(rng);
    const Tensor grads[] = {dy};
    REQUIRE(plain->Backward(grads).ok());
    REQUIRE(unit->Backward(grads).ok());
    for (size_t p = 0; p < plain->parameters().size(); ++p) {
      const std::string& name = plain->parameter_name(p);
      size_t q = 0;
      while (q < unit->parameters().size() && unit->parameter_name(q) != name) ++q;
      REQUIRE(q < unit->parameters().size());
      CheckClose(plain->gradient(p), unit->gradient(q), 2e-4f, "gradient of " + name, 0.1f);
    }
  }
  // The running statistics moved the same way.
  for (const char* stat : {"bn.running_mean", "bn.running_var"}) {
    const Graph& a = plain->graph();
    const Graph& b = unit->graph();
    const ValueId ia = a.FindValue(stat), ib = b.FindValue(stat);
    REQUIRE(ia != kNoValue);
    REQUIRE(ib != kNoValue);
    CheckClose(a.value(ia).data, b.value(ib).data, 1e-5f, stat);
  }
  // Frozen statistics: training forwards leave them unchanged.
  unit->set_batch_norm_frozen(true);
  const ValueId var = unit->graph().FindValue("bn.running_var");
  const Tensor before = unit->graph().value(var).data.Clone().value();
  const Tensor inputs[] = {RandomInput(rng, 6)};
  REQUIRE(unit->Forward(inputs, training::Mode::kTraining).ok());
  CheckClose(before, unit->graph().value(var).data, 0.0f, "frozen running_var");
  // The conv bias's gradient is zero up to rounding (BatchNormalization removes it); the weight's is not.
  float w_grad = 0.0f;
  for (size_t q = 0; q < unit->parameters().size(); ++q) {
    if (unit->parameter_name(q) != "conv.weight") continue;
    const Tensor& g = unit->gradient(q);
    for (int64_t i = 0; i < g.NumElements(); ++i) w_grad = std::max(w_grad, std::abs(g.data<float>()[i]));
  }
  CHECK(w_grad > 1e-2f);
}

TEST_CASE("QAT Conv-BN-Relu: ConvertQat's int8 Conv computes what the fake-quant forward simulated", "[qat]") {
  std::mt19937_64 rng = testing::MakeRng("qat conv_bn convert");
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  const Graph original = ConvBnGraph(rng, true);
  qat::QatQConfig q = qat::GetDefaultQatQConfig("x86", 1).value();
  auto m = qat::PrepareQat(original, q, context);
  INFO(m.status().message());
  REQUIRE(m.ok());
  CHECK(m->conv_bn_units().size() == 1);
  // Fake-quant sites: the input, the Relu output (not the Conv's or BatchNormalization's), the weight.
  std::vector<std::string> nodes;
  for (const qat::FakeQuantSite& s : m->sites()) nodes.push_back(s.node);
  std::sort(nodes.begin(), nodes.end());
  CHECK(nodes == std::vector<std::string>{"conv.weight_fake_quant", "relu.fake_quant", "x.fake_quant"});
  // A few training steps move observers and statistics; then freeze both and check eval against int8.
  for (int step = 0; step < 3; ++step) {
    const Tensor inputs[] = {RandomInput(rng, 8)};
    REQUIRE(m->training_graph().Forward(inputs, training::Mode::kTraining).ok());
  }
  REQUIRE(m->DisableObservers().ok());
  m->FreezeBatchNormStats();
  const Tensor x = RandomInput(rng, 4);
  const Tensor inputs[] = {x};
  const Tensor simulated = m->training_graph().Forward(inputs, training::Mode::kEval).value()[0];

  auto prepared = qat::PrepareForConvert(*m);
  INFO(prepared.status().message());
  REQUIRE(prepared.ok());
  // The folded weight Convert quantizes is the W * s the weight fake-quant saw.
  CHECK(prepared->fuse_report().folded_batch_norms == std::vector<std::string>{"bn"});
  auto converted = qat::ConvertQat(*m);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  const Tensor int8_out = RunFloat(*converted, QuantizedGraphRegistry(), x);
  QParams out_q = prepared->CalculateQParams().value().at("relu");
  int64_t off_by_one = 0;
  for (int64_t i = 0; i < simulated.NumElements(); ++i) {
    const double lsb = std::abs(int8_out.data<float>()[i] - simulated.data<float>()[i]) / out_q.scale();
    INFO("element " << i << ": int8 " << int8_out.data<float>()[i] << ", simulated " << simulated.data<float>()[i]);
    REQUIRE(lsb <= 1.01);
    off_by_one += lsb > 0.01;
  }
  // Rounding near a half LSB may differ (the simulation rounds float conv outputs, the kernel requantizes int32).
  CHECK(off_by_one <= simulated.NumElements() / 50);
  int64_t nonzero = 0;
  for (int64_t i = 0; i < simulated.NumElements(); ++i) nonzero += simulated.data<float>()[i] != 0.0f;
  CHECK(nonzero > simulated.NumElements() / 8);  // not a vacuous all-zero Relu
}

}  // namespace
}  // namespace octet
