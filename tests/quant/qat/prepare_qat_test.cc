// PrepareQat's placement and the training integration: fake-quant nodes where Prepare would observe (graph input,
// after the fused Conv-BN-Relu, not again after MaxPool/Flatten, the logits, each weight), skipped nodes left float,
// learned scales and zero points (kLearnable) in the optimizer's parameter list and moved by training, and frozen
// observers keeping their qparams.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/builder.h"
#include "quant/qat/prepare_qat.h"
#include "quant/qat/train_qat.h"
#include "quant/training/parameter_init.h"
#include "tests/test_util.h"

namespace octet {
namespace {

Graph SmallCnn(uint64_t seed) {
  GraphBuilder b("small_cnn", 0);
  ValueId x = b.Input("image", DType::kF32, Shape{kUnknownDim, 1, 8, 8});
  ValueId h = b.Conv2d("conv1", x, {.in_channels = 1, .out_channels = 4, .kernel_size = {3, 3}, .padding = {1, 1}});
  h = b.MaxPool2d("pool1", b.ReLU("relu1", b.BatchNorm2d("bn1", h, 4)), {.kernel_size = {2, 2}});
  b.Output(b.Linear("fc", b.Flatten("flatten", h), 64, 10));
  Graph g = std::move(b).Build().value();
  REQUIRE(training::ResetParameters(g, seed).ok());
  return g;
}

Tensor Images(std::mt19937_64& rng, int64_t n) {
  Tensor x = Tensor::Create(DType::kF32, Shape{n, 1, 8, 8}).value();
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = u(rng);
  return x;
}

// The learned scale of a kLearnable module.
std::vector<float> Scales(qat::FakeQuantizeModule& module) {
  const std::span<const float> v = module.learnable_parameters().at(0).value.values<float>();
  return std::vector<float>(v.begin(), v.end());
}

std::vector<std::string> SiteNodes(const qat::QatModel& m) {
  std::vector<std::string> nodes;
  for (const qat::FakeQuantSite& s : m.sites()) nodes.push_back(s.node);
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

TEST_CASE("PrepareQat places fake-quant nodes where Prepare places observers", "[qat]") {
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  auto m = qat::PrepareQat(SmallCnn(1), "x86", context);
  INFO(m.status().message());
  REQUIRE(m.ok());
  CHECK(SiteNodes(*m) == std::vector<std::string>{"conv1.weight_fake_quant", "fc.fake_quant", "fc.weight_fake_quant",
                                                  "image.fake_quant", "relu1.fake_quant"});
  for (const qat::FakeQuantSite& s : m->sites()) {
    INFO(s.node);
    CHECK(s.module->config().kind == qat::FakeQuantizeKind::kFusedMovingAvgObs);
    if (s.node == "relu1.fake_quant") {
      // One module for the share-qparams chain Relu -> MaxPool -> Flatten.
      CHECK(s.values == std::vector<std::string>{"relu1", "pool1", "flatten"});
    }
  }
  // The graph output is the fake-quantized logits; the weights are still trained (behind their fake-quant).
  const Graph& g = m->training_graph().graph();
  CHECK(g.value(g.outputs()[0]).name == "fc.fake_quant");
  std::vector<std::string> params;
  for (size_t i = 0; i < m->training_graph().parameters().size(); ++i) {
    params.push_back(m->training_graph().parameter_name(i));
  }
  std::sort(params.begin(), params.end());
  CHECK(params == std::vector<std::string>{"bn1.bias", "bn1.weight", "conv1.bias", "conv1.weight", "fc.bias",
                                           "fc.weight"});

  qat::PrepareQatOptions skip;
  skip.skip = {"fc"};
  auto kept = qat::PrepareQat(SmallCnn(1), "x86", context, skip);
  REQUIRE(kept.ok());
  CHECK(SiteNodes(*kept) == std::vector<std::string>{"conv1.weight_fake_quant", "image.fake_quant",
                                                     "relu1.fake_quant"});

  // Linear + BatchNormalization: Convert would fold it, training would not; refused, naming the node.
  GraphBuilder b("linear_bn", 0);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 8});
  b.Output(b.BatchNorm2d("bn", b.Linear("fc", x, 8, 4), 4));
  auto linear_bn = qat::PrepareQat(std::move(b).Build().value(), "x86", context);
  REQUIRE_FALSE(linear_bn.ok());
  CHECK_THAT(linear_bn.status().message(), Catch::Contains("'bn'") && Catch::Contains("LinearBn"));
}

TEST_CASE("QAT trains learned scales and zero points, and frozen observers keep their qparams", "[qat]") {
  std::mt19937_64 rng = testing::MakeRng("qat prepare learnable");
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  qat::QatQConfig q = qat::GetDefaultQatQConfig("x86", 1).value();
  for (qat::FakeQuantizeConfig* f : {&q.activation, &q.weight}) {
    f->kind = qat::FakeQuantizeKind::kLearnable;
    f->use_grad_scaling = true;
  }
  auto m = qat::PrepareQat(SmallCnn(2), q, context);
  INFO(m.status().message());
  REQUIRE(m.ok());
  training::TrainingGraph& tg = m->training_graph();
  // 6 graph parameters, then scale and zero point of each of the 5 modules.
  REQUIRE(tg.AllParameters().size() == tg.parameters().size() + 2 * m->sites().size());
  const Tensor x = Images(rng, 48);
  std::vector<int64_t> labels;
  for (int i = 0; i < 48; ++i) labels.push_back(i % 10);
  qat::QatTrainOptions o;
  o.train.epochs = 2;
  o.train.batch_size = 16;
  o.train.sgd = {.lr = 0.01, .momentum = 0.9};
  o.freeze_observers_after_steps = 3;  // static estimate for the first epoch, then learning
  // Scales as the static estimate leaves them, just before learning starts.
  std::vector<std::vector<float>> at_switch;
  o.train.on_batch_begin = [&](int64_t step) -> Status {
    if (step == 3) {
      for (const qat::FakeQuantSite& s : m->sites()) {
        at_switch.push_back(Scales(*s.module));
        if (!s.module->learning_enabled()) return Internal("'{}' is not learning at step 3", s.node);
      }
    }
    return OkStatus();
  };
  auto summaries = qat::TrainQat(*m, x, labels, o);
  INFO(summaries.status().message());
  REQUIRE(summaries.ok());
  REQUIRE(at_switch.size() == m->sites().size());
  int moved = 0;
  for (size_t i = 0; i < m->sites().size(); ++i) {
    moved += Scales(*m->sites()[i].module) != at_switch[i];
  }
  CHECK(moved == static_cast<int>(m->sites().size()));  // every scale learned something

  // Frozen fused observers: training forwards no longer move the qparams.
  auto fused = qat::PrepareQat(SmallCnn(3), "x86", context);
  REQUIRE(fused.ok());
  const Tensor inputs[] = {Images(rng, 8)};
  REQUIRE(fused->training_graph().Forward(inputs, training::Mode::kTraining).ok());
  REQUIRE(fused->DisableObservers().ok());
  std::vector<float> before;
  for (const qat::FakeQuantSite& s : fused->sites()) {
    before.push_back(s.module->FakeQuantQParams().value().scales()[0]);
  }
  const Tensor other[] = {Images(rng, 8)};
  REQUIRE(fused->training_graph().Forward(other, training::Mode::kTraining).ok());
  for (size_t i = 0; i < fused->sites().size(); ++i) {
    CHECK(fused->sites()[i].module->FakeQuantQParams().value().scales()[0] == before[i]);
  }
}

}  // namespace
}  // namespace octet
