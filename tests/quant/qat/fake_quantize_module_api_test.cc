// FakeQuantizeModule's API beyond the PyTorch parity data: get_default_qat_qconfig, the errors (bad ch_axis, bad
// observers, empty inputs, channel-count changes, Backward misuse), flags, and the learnable parameters' gradient
// accumulation.
#include <catch2/catch.hpp>

#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "quant/qat/fake_quantize_module.h"

namespace octet::qat {
namespace {

const Context& TestContext() {
  static const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  return context;
}

Tensor Make(Shape shape, std::vector<float> values) {
  auto t = Tensor::FromValues<float>(std::move(shape), std::span<const float>(values));
  REQUIRE(t.ok());
  return std::move(t).value();
}

Tensor Ramp(Shape shape, float step = 0.37f) {
  std::vector<float> v(static_cast<size_t>(shape.NumElements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<float>(i) - static_cast<float>(v.size()) / 2) * step;
  return Make(std::move(shape), v);
}

std::unique_ptr<FakeQuantizeModule> CreateOrFail(const FakeQuantizeConfig& config) {
  auto m = FakeQuantizeModule::Create(config, TestContext());
  if (!m.ok()) FAIL(m.status().ToString());
  return std::move(m).value();
}

FakeQuantizeConfig PerChannel(FakeQuantizeKind kind, int ch_axis) {
  FakeQuantizeConfig config;
  config.kind = kind;
  config.observer = ObserverKind::kMovingAveragePerChannelMinMax;
  config.observer_options.dtype = DType::kS8;
  config.observer_options.qscheme = QScheme::kPerChannelSymmetric;
  config.observer_options.quant_min = -128;
  config.observer_options.quant_max = 127;
  config.observer_options.ch_axis = ch_axis;
  return config;
}

constexpr FakeQuantizeKind kKinds[] = {FakeQuantizeKind::kFakeQuantize, FakeQuantizeKind::kFusedMovingAvgObs,
                                       FakeQuantizeKind::kLearnable};

TEST_CASE("GetDefaultQatQConfig follows PyTorch 1.13's get_default_qat_qconfig", "[qat_fake_quant]") {
  for (int version : {0, 1}) {
    const FakeQuantizeKind kind = version == 1 ? FakeQuantizeKind::kFusedMovingAvgObs : FakeQuantizeKind::kFakeQuantize;
    for (std::string backend : {"x86", "fbgemm", "qnnpack", "onednn"}) {
      INFO(backend << " version " << version);
      auto q = GetDefaultQatQConfig(backend, version);
      REQUIRE(q.ok());
      CHECK(q->activation.kind == kind);
      CHECK(q->weight.kind == kind);
      CHECK(q->activation.observer == ObserverKind::kMovingAverageMinMax);
      CHECK(q->activation.observer_options.dtype == DType::kU8);
      CHECK(q->activation.observer_options.reduce_range == (backend == "x86" || backend == "fbgemm"));
      const bool per_channel = backend != "qnnpack";
      CHECK(q->weight.observer == (per_channel ? ObserverKind::kMovingAveragePerChannelMinMax
                                               : ObserverKind::kMovingAverageMinMax));
      CHECK(q->weight.observer_options.dtype == DType::kS8);
      CHECK(q->weight.observer_options.qscheme ==
            (per_channel ? QScheme::kPerChannelSymmetric : QScheme::kPerTensorSymmetric));
      // Both build, and their effective ranges are PyTorch's: activations [0, 127] with reduce_range.
      auto act = CreateOrFail(q->activation);
      auto w = CreateOrFail(q->weight);
      REQUIRE(act->Forward(Ramp(Shape{2, 8})).ok());
      REQUIRE(w->Forward(Ramp(Shape{4, 3})).ok());
      auto aq = act->CalculateQParams();
      auto wq = w->CalculateQParams();
      REQUIRE(aq.ok());
      REQUIRE(wq.ok());
      CHECK(aq->quant_max() == (q->activation.observer_options.reduce_range ? 127 : 255));
      CHECK(wq->quant_min() == -128);
      CHECK(wq->quant_max() == 127);
      CHECK(wq->num_channels() == (per_channel ? 4 : 1));
    }
  }
  auto bad_backend = GetDefaultQatQConfig("tensorrt", 1);
  REQUIRE_FALSE(bad_backend.ok());
  CHECK_THAT(bad_backend.status().message(), Catch::Contains("unknown backend 'tensorrt'"));
  auto bad_version = GetDefaultQatQConfig("x86", 2);
  REQUIRE_FALSE(bad_version.ok());
  CHECK_THAT(bad_version.status().message(), Catch::Contains("version must be 0 or 1, got 2"));
}

TEST_CASE("FusedMovingAvgObsFakeQuantize refuses what PyTorch's fused op cannot do", "[qat_fake_quant]") {
  auto axis1 = FakeQuantizeModule::Create(PerChannel(FakeQuantizeKind::kFusedMovingAvgObs, 1), TestContext());
  REQUIRE_FALSE(axis1.ok());
  CHECK_THAT(axis1.status().message(), Catch::Contains("supports only ch_axis 0") && Catch::Contains("got ch_axis 1"));
  auto negative = FakeQuantizeModule::Create(PerChannel(FakeQuantizeKind::kFusedMovingAvgObs, -1), TestContext());
  REQUIRE_FALSE(negative.ok());
  CHECK_THAT(negative.status().message(), Catch::Contains("ch_axis -1"));

  FakeQuantizeConfig histogram;
  histogram.observer = ObserverKind::kHistogram;
  auto h = FakeQuantizeModule::Create(histogram, TestContext());
  REQUIRE_FALSE(h.ok());
  CHECK_THAT(h.status().message(), Catch::Contains("moving_average_minmax") && Catch::Contains("histogram"));

  // A rank-1 input has no [C, -1] view.
  auto m = CreateOrFail(PerChannel(FakeQuantizeKind::kFusedMovingAvgObs, 0));
  auto r = m->Forward(Ramp(Shape{5}));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("rank >= 2"));
}

TEST_CASE("fake-quantize modules reject bad inputs with clear errors", "[qat_fake_quant]") {
  for (FakeQuantizeKind kind : kKinds) {
    INFO(FakeQuantizeKindName(kind));
    FakeQuantizeConfig config;
    config.kind = kind;
    auto m = CreateOrFail(config);
    // Backward before any Forward.
    auto early = m->Backward(Ramp(Shape{2, 3}));
    REQUIRE_FALSE(early.ok());
    CHECK_THAT(early.status().message(), Catch::Contains("no forward pass"));
    // Empty input.
    auto empty = m->Forward(Make(Shape{0, 3}, {}));
    REQUIRE_FALSE(empty.ok());
    CHECK_THAT(empty.status().message(), Catch::Contains("input is empty (shape [0, 3])"));
    // Wrong dtype.
    auto u8 = Tensor::Create(DType::kU8, Shape{2});
    REQUIRE(u8.ok());
    auto wrong = m->Forward(*u8);
    REQUIRE_FALSE(wrong.ok());
    CHECK_THAT(wrong.status().message(), Catch::Contains("must be f32"));
    // dY of another shape.
    REQUIRE(m->Forward(Ramp(Shape{2, 3})).ok());
    auto dy = m->Backward(Ramp(Shape{3, 2}));
    REQUIRE_FALSE(dy.ok());
    CHECK_THAT(dy.status().message(), Catch::Contains("shape [2, 3]"));
    // Non-finite input.
    auto nan = m->Forward(Make(Shape{2}, {1.0f, std::numeric_limits<float>::quiet_NaN()}));
    REQUIRE_FALSE(nan.ok());
  }
}

TEST_CASE("per-channel fake-quantize modules refuse a changed channel count", "[qat_fake_quant]") {
  for (FakeQuantizeKind kind : kKinds) {
    INFO(FakeQuantizeKindName(kind));
    auto m = CreateOrFail(PerChannel(kind, 0));
    REQUIRE(m->Forward(Ramp(Shape{4, 3})).ok());
    auto changed = m->Forward(Ramp(Shape{5, 3}));
    REQUIRE_FALSE(changed.ok());
    CHECK_THAT(changed.status().message(), Catch::Contains("5"));
    CHECK_THAT(changed.status().message(), Catch::Contains("4"));
    // Same with the observer off (the qparams no longer fit the input).
    m->set_observer_enabled(false);
    auto off = m->Forward(Ramp(Shape{6, 3}));
    REQUIRE_FALSE(off.ok());
    auto eval = m->ForwardEval(Ramp(Shape{6, 3}));
    REQUIRE_FALSE(eval.ok());
    REQUIRE(m->ForwardEval(Ramp(Shape{4, 7})).ok());
  }
  // An axis beyond the input's rank (FakeQuantize and learnable accept other axes than 0).
  for (FakeQuantizeKind kind : {FakeQuantizeKind::kFakeQuantize, FakeQuantizeKind::kLearnable}) {
    auto m = CreateOrFail(PerChannel(kind, 3));
    auto r = m->Forward(Ramp(Shape{4, 3}));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("ch_axis 3"));
  }
}

TEST_CASE("fake-quantize flags: disabled fake-quant is the identity with a straight gradient", "[qat_fake_quant]") {
  for (FakeQuantizeKind kind : kKinds) {
    INFO(FakeQuantizeKindName(kind));
    FakeQuantizeConfig config;
    config.kind = kind;
    auto m = CreateOrFail(config);
    CHECK(m->observer_enabled());
    CHECK(m->fake_quant_enabled());
    const Tensor x = Ramp(Shape{3, 5});
    auto q = m->Forward(x);
    REQUIRE(q.ok());
    CHECK(std::vector<float>(q->values<float>().begin(), q->values<float>().end()) !=
          std::vector<float>(x.values<float>().begin(), x.values<float>().end()));
    m->set_fake_quant_enabled(false);
    auto y = m->Forward(x);
    REQUIRE(y.ok());
    const Tensor dy = Ramp(Shape{3, 5}, -1.5f);
    auto dx = m->Backward(dy);
    REQUIRE(dx.ok());
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      CHECK(y->data<float>()[i] == x.data<float>()[i]);
      CHECK(dx->data<float>()[i] == dy.data<float>()[i]);
    }
    // The eval forward equals the training forward with the observer off.
    m->set_fake_quant_enabled(true);
    auto train = m->Forward(x);
    m->set_observer_enabled(false);
    auto frozen = m->Forward(x);
    auto eval = m->ForwardEval(x);
    REQUIRE(train.ok());
    REQUIRE(frozen.ok());
    REQUIRE(eval.ok());
    for (int64_t i = 0; i < x.NumElements(); ++i) CHECK(eval->data<float>()[i] == frozen->data<float>()[i]);
    const Status learning = m->EnableParamLearning();
    CHECK(learning.ok() == (kind == FakeQuantizeKind::kLearnable));
    CHECK(m->learnable_parameters().size() == (kind == FakeQuantizeKind::kLearnable ? 2u : 0u));
  }
}

TEST_CASE("learnable fake-quantize accumulates dScale / dZp into its parameters' gradients", "[qat_fake_quant]") {
  FakeQuantizeConfig config;
  config.kind = FakeQuantizeKind::kLearnable;
  auto m = CreateOrFail(config);
  const Tensor x = Ramp(Shape{4, 6}, 0.9f);
  REQUIRE(m->Forward(x).ok());  // static estimate: the observer's qparams become the parameters
  REQUIRE(m->EnableParamLearning().ok());
  auto params = m->learnable_parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].name == "scale");
  CHECK(params[1].name == "zero_point");
  params[0].value.data<float>()[0] *= 0.5f;  // clip some values so dZp is not zero
  const Tensor dy = Ramp(Shape{4, 6}, 0.25f);
  REQUIRE(m->Forward(x).ok());
  REQUIRE(m->Backward(dy).ok());
  const float ds = params[0].grad.data<float>()[0];
  const float dz = params[1].grad.data<float>()[0];
  CHECK(ds != 0.0f);
  CHECK(dz != 0.0f);
  REQUIRE(m->Backward(dy).ok());  // adds again
  CHECK(params[0].grad.data<float>()[0] == 2.0f * ds);
  CHECK(params[1].grad.data<float>()[0] == 2.0f * dz);
  m->ZeroGrad();
  CHECK(params[0].grad.data<float>()[0] == 0.0f);
  CHECK(params[1].grad.data<float>()[0] == 0.0f);
  // A scale learned below eps is clamped to float32 eps before use, and calculate_qparams rounds the zero point.
  params[0].value.data<float>()[0] = -1.0f;
  params[1].value.data<float>()[0] = 12.5f;
  REQUIRE(m->Forward(x).ok());
  CHECK(params[0].value.data<float>()[0] == std::numeric_limits<float>::epsilon());
  auto q = m->CalculateQParams();
  REQUIRE(q.ok());
  CHECK(q->zero_point() == 12);  // round half to even

  // Per channel with the channel count configured: parameters of their final shape before any Forward.
  FakeQuantizeConfig pc = PerChannel(FakeQuantizeKind::kLearnable, 1);
  pc.channels = 6;
  auto per_channel = CreateOrFail(pc);
  auto pp = per_channel->learnable_parameters();
  REQUIRE(pp.size() == 2);
  CHECK(pp[0].value.shape() == Shape{6});
  auto mismatch = per_channel->Forward(Ramp(Shape{4, 5}));
  REQUIRE_FALSE(mismatch.ok());
  CHECK_THAT(mismatch.status().message(), Catch::Contains("5 channels along axis 1"));
}

}  // namespace
}  // namespace octet::qat
