// QConfig presets against PyTorch 1.13's get_default_qconfig and XNNPACKQuantizer, QConfigMapping resolution order,
// numerics profile names.
#include <catch2/catch.hpp>

#include "core/builder.h"
#include "observers/observer_factory.h"
#include "quant/numerics_profile.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"

namespace octet {
namespace {

TEST_CASE("Backend presets match PyTorch 1.13's get_default_qconfig", "[quant]") {
  struct Row {
    const char* backend;
    bool reduce_range;
    ObserverKind weight_kind;
    QScheme weight_scheme;
  };
  const Row rows[] = {
      {"x86", true, ObserverKind::kPerChannelMinMax, QScheme::kPerChannelSymmetric},
      {"fbgemm", true, ObserverKind::kPerChannelMinMax, QScheme::kPerChannelSymmetric},
      {"onednn", false, ObserverKind::kPerChannelMinMax, QScheme::kPerChannelSymmetric},
      {"qnnpack", false, ObserverKind::kMinMax, QScheme::kPerTensorSymmetric},
  };
  for (const Row& r : rows) {
    INFO(r.backend);
    auto q = GetDefaultQConfig(r.backend);
    REQUIRE(q.ok());
    REQUIRE(q->Validate().ok());
    CHECK_FALSE(q->is_dynamic());
    auto act = q->activation.Make().value();
    CHECK(act->kind() == ObserverKind::kHistogram);
    CHECK(act->options().dtype == DType::kU8);
    CHECK(act->options().qscheme == QScheme::kPerTensorAffine);
    CHECK(act->options().histogram_variant == HistogramVariant::kLegacy113);
    // reduce_range: the 7-bit activation range that keeps vpmaddubsw from saturating (numerics.md §2.12).
    CHECK(act->quant_min() == 0);
    CHECK(act->quant_max() == (r.reduce_range ? 127 : 255));
    auto w = q->weight.Make().value();
    CHECK(w->kind() == r.weight_kind);
    CHECK(w->options().dtype == DType::kS8);
    CHECK(w->options().qscheme == r.weight_scheme);
    CHECK(w->quant_min() == -128);
    CHECK(w->quant_max() == 127);
  }
}

TEST_CASE("The symmetric preset is XNNPACKQuantizer's per-channel config", "[quant]") {
  QConfig q = GetDefaultQConfig("symmetric").value();
  REQUIRE(q.Validate().ok());
  auto act = q.activation.Make().value();
  CHECK(act->options().dtype == DType::kS8);
  CHECK(act->quant_min() == -128);
  CHECK(act->quant_max() == 127);
  CHECK(act->options().eps == 1.0f / 4096.0f);
  auto w = q.weight.Make(/*ch_axis=*/1).value();
  CHECK(w->options().qscheme == QScheme::kPerChannelSymmetric);
  CHECK(w->quant_min() == -127);
  CHECK(w->quant_max() == 127);
  CHECK(w->options().ch_axis == 1);  // the operator's axis replaces the preset's 0
  // A weight that spans [-2, 1] per channel gets scale 2/127 (max|w| over half the symmetric range).
  Tensor t = Tensor::FromValues<float>(Shape{2, 2}, std::vector<float>{-2.0f, 1.0f, 0.5f, 1.0f}).value();
  auto w0 = q.weight.Make(0).value();
  REQUIRE(w0->Observe(t, "w").ok());
  QParams qp = w0->CalculateQParams().value();
  CHECK(qp.scales()[0] == Approx(2.0f / 127.0f));
  CHECK(qp.zero_points()[0] == 0);
}

TEST_CASE("Unknown backends and invalid qconfigs are rejected by name", "[quant]") {
  auto bad = GetDefaultQConfig("tensorrt");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'tensorrt'") && Catch::Contains("qnnpack"));
  QConfig q = GetDefaultQConfig("x86").value();
  q.weight.options.dtype = DType::kU8;
  REQUIRE_FALSE(q.Validate().ok());
  CHECK_THAT(q.Validate().message(), Catch::Contains("qint8"));
  QConfigMapping m;
  m.SetObjectType("Conv", q);
  CHECK_THAT(m.Validate().message(), Catch::Contains("op type 'Conv'"));
}

TEST_CASE("Dynamic qconfigs observe activations with a PlaceholderObserver", "[quant]") {
  QConfig d = GetDefaultDynamicQConfig(true);
  CHECK(d.is_dynamic());
  CHECK(d.weight.per_channel());
  CHECK_FALSE(GetDefaultDynamicQConfig(false).weight.per_channel());
  CHECK(d.Validate().ok());
}

TEST_CASE("QConfigMapping resolves node name, parent scopes, op type, then global", "[quant]") {
  const QConfig x86 = GetDefaultQConfig("x86").value();
  const QConfig qnnpack = GetDefaultQConfig("qnnpack").value();
  const QConfig sym = GetDefaultQConfig("symmetric").value();
  QConfigMapping m;
  m.SetGlobal(x86).SetObjectType("Gemm", qnnpack).SetModuleName("layer1", sym).SetModuleName("layer1.0.fc",
                                                                                            std::nullopt);
  auto node = [](std::string name, std::string op) { return Node{std::move(name), std::move(op), "", {}, {}, {}}; };
  CHECK(m.QConfigFor(node("stem", "Conv")) == x86);
  CHECK(m.QConfigFor(node("head", "Gemm")) == qnnpack);
  CHECK(m.QConfigFor(node("layer1.0.conv1", "Conv")) == sym);  // a parent scope beats the op type
  CHECK(m.QConfigFor(node("layer1.0.fc2", "Gemm")) == sym);    // "layer1.0.fc" is no parent of "layer1.0.fc2"
  CHECK_FALSE(m.QConfigFor(node("layer1.0.fc", "Gemm")).has_value());  // none: keep float
  CHECK_FALSE(QConfigMapping().QConfigFor(node("a", "Conv")).has_value());
  CHECK(GetDefaultQConfigMapping("onednn").value().QConfigFor(node("a", "Add")) ==
        GetDefaultQConfig("onednn").value());
}

TEST_CASE("QConfigMapping::Validate names a node name that matches nothing", "[quant]") {
  GraphBuilder b("m");
  ValueId x = b.Input("x", DType::kF32, Shape{1, 4});
  {
    auto s = b.Scope("block");
    x = b.Linear("fc", x, 4, 4);
  }
  b.Output(x);
  Graph g = std::move(b).Build().value();
  QConfigMapping m;
  m.SetModuleName("block", std::nullopt);
  CHECK(m.Validate(&g).ok());
  m.SetModuleName("blok.fc", std::nullopt);
  const Status s = m.Validate(&g);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("'blok.fc'"));
  QConfigMapping prefix_only;
  prefix_only.SetModuleName("bloc", std::nullopt);  // a string prefix, not a scope
  CHECK_FALSE(prefix_only.Validate(&g).ok());
}

TEST_CASE("Numerics profiles by name", "[quant]") {
  CHECK(NumericsProfileNames().size() == 4);
  for (std::string_view name : NumericsProfileNames()) {
    auto p = ParseNumericsProfile(name);
    REQUIRE(p.ok());
    CHECK(NumericsProfileName(*p) == name);
  }
  const NumericsSpec tflite = GetNumericsSpec(ParseNumericsProfile("tflite").value());
  CHECK(tflite.requantization == reference::QGemmStage::kQ31);
  CHECK(tflite.quantize_rounding == QuantizeRounding::kHalfAwayDivide);
  CHECK(tflite.symmetric_weight_quant_min == -127);
  const NumericsSpec fbgemm = GetNumericsSpec(NumericsProfile::kPytorchFbgemm);
  CHECK(fbgemm.requantization == reference::QGemmStage::kFbgemm);
  CHECK(fbgemm.float_bias);
  const NumericsSpec ref = GetNumericsSpec(NumericsProfile::kReference);
  CHECK(ref.requantization == reference::QGemmStage::kFp32);
  CHECK_FALSE(ref.float_bias);
  CHECK(ref.non_finite == NonFiniteQuantize::kError);
  CHECK(GetNumericsSpec(NumericsProfile::kPytorchQnnpack).non_finite == NonFiniteQuantize::kQuantMin);
  auto bad = ParseNumericsProfile("gemmlowp");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'gemmlowp'") && Catch::Contains("pytorch-fbgemm"));
}

}  // namespace
}  // namespace octet
