// QAT end to end on the exported digits CNN (tests/data/models/digits_cnn.onnx, trained in PyTorch): starting from the
// trained float model, a few epochs of QAT on the first 1437 digits images (PrepareQat, TrainQat, ConvertQat) give an
// int8 model at least as accurate on the last 360 as static PTQ of the same model (calibrated on digits_calib_x);
// with 4-bit per-tensor weights (quant_min/quant_max -8..7) too; and with 3-bit per-tensor weights (-4..3), where
// PTQ loses 8.6 points, QAT recovers at least half of them (4-bit weights cost this small CNN nothing in PTQ, so the
// hard setting is one bit narrower).
// The figures are printed for the record. The converted model also agrees with the QAT model's own fake-quant
// forward (what QAT simulates is what the int8 kernels compute).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/cpu_features.h"
#include "core/executor.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/qat/convert_qat.h"
#include "quant/qat/prepare_qat.h"
#include "quant/qat/train_qat.h"
#include "quant/quantized_registry.h"
#include "tests/quant/quant_test_util.h"
#include "tests/quant/training/digits_data.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;
constexpr int kQatVersion = 1;  // get_default_qat_qconfig(version=1): FusedMovingAvgObsFakeQuantize

// Digits as the exported model's input [N, 1, 8, 8].
struct Data {
  testing::DigitsSplit split = testing::LoadDigitsSplit(/*image_shape=*/true);
  Tensor calib = ReadNpy(kModels + "digits_calib_x.npy").value().Reshaped(Shape{256, 1, 8, 8}).value();
};

const Data& Digits() {
  static const Data data;
  return data;
}

Tensor Run(const Graph& g, const OpRegistry& r, const Tensor& x, const Context& context) {
  return testing::RunWithInputShapes(g, context, r, {x})[0];
}

// The weights: the presets' (8-bit per channel) or a narrower range with one scale per tensor, in both flows.
struct Weights {
  bool per_tensor = false;
  int64_t quant_min = -128, quant_max = 127;
  std::string ToString() const {
    return per_tensor ? fmt::format("per-tensor weights [{}, {}]", quant_min, quant_max) : "x86 presets";
  }
};

void SetRange(const Weights& w, ObserverOptions& o) {
  if (!w.per_tensor) return;
  o.quant_min = w.quant_min;
  o.quant_max = w.quant_max;
}

double PtqAccuracy(const Graph& model, const Weights& weights, const Context& context) {
  QConfig q = GetDefaultQConfig("x86").value();
  if (weights.per_tensor) {
    q.weight = ObserverSpec{ObserverKind::kMinMax, {}};
    q.weight.options.dtype = DType::kS8;
    q.weight.options.qscheme = QScheme::kPerTensorSymmetric;
    SetRange(weights, q.weight.options);
  }
  QConfigMapping mapping;
  mapping.SetGlobal(q);
  auto prepared = Prepare(model, mapping);
  REQUIRE(prepared.ok());
  std::vector<std::vector<Tensor>> batches;
  const std::vector<Tensor> calib = SplitBatches(Digits().calib, 32).value();
  for (const Tensor& t : calib) batches.push_back({t});
  testing::CalibrateQuietly(*prepared, batches, context);
  auto converted = Convert(*prepared);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  return testing::Top1Percent(Run(*converted, QuantizedGraphRegistry(), Digits().split.test_x, context),
                              Digits().split.test_y);
}

struct QatRun {
  double fake_quant_accuracy = 0.0;  // the QAT model's eval forward (fake-quant simulation)
  double int8_accuracy = 0.0;        // after ConvertQat, on the int8 kernels
  double max_logit_diff_lsb = 0.0;   // |int8 - simulated| logits, in output LSBs
};

// SGD with momentum 0.9 and weight decay 1e-4, batches of 32.
struct Recipe {
  int epochs = 2;
  double lr = 0.002;
  bool cosine = false;
};

QatRun Qat(const Graph& model, const Weights& weights, const Recipe& recipe, uint64_t seed, const Context& context) {
  const int epochs = recipe.epochs;
  qat::QatQConfig q = qat::GetDefaultQatQConfig("x86", kQatVersion).value();
  if (weights.per_tensor) {
    q.weight.observer = ObserverKind::kMovingAverageMinMax;
    q.weight.observer_options.qscheme = QScheme::kPerTensorSymmetric;
    q.weight.observer_options.ch_axis.reset();
    SetRange(weights, q.weight.observer_options);
  }
  auto m = qat::PrepareQat(model, q, context);
  INFO(m.status().message());
  REQUIRE(m.ok());
  const Data& d = Digits();
  const int64_t per_epoch = (static_cast<int64_t>(d.split.train_y.size()) + 31) / 32;
  qat::QatTrainOptions o;
  o.train.epochs = epochs;
  o.train.batch_size = 32;
  o.train.seed = seed;
  o.train.sgd = {.lr = recipe.lr, .momentum = 0.9, .weight_decay = 1e-4};
  if (recipe.cosine) o.train.schedule = {.kind = training::LrScheduleKind::kCosine, .t_max = epochs};
  // PyTorch's recipe, scaled down: BatchNorm statistics frozen for the last epoch, observers for the last half.
  o.freeze_bn_after_steps = per_epoch * (epochs - 1);
  o.freeze_observers_after_steps = per_epoch * epochs / 2 + per_epoch / 2;
  auto summaries = qat::TrainQat(*m, d.split.train_x, d.split.train_y, o);
  INFO(summaries.status().message());
  REQUIRE(summaries.ok());
  QatRun run;
  run.fake_quant_accuracy =
      100.0 * training::ClassifierAccuracy(m->training_graph(), d.split.test_x, d.split.test_y).value();
  const Tensor inputs[] = {d.split.test_x};
  const Tensor simulated = m->training_graph().Forward(inputs, training::Mode::kEval).value()[0];
  auto converted = qat::ConvertQat(*m);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  const Tensor int8_logits = Run(*converted, QuantizedGraphRegistry(), d.split.test_x, context);
  run.int8_accuracy = testing::Top1Percent(int8_logits, d.split.test_y);
  // The logits' fake-quant gives their LSB.
  const std::string& logits = model.value(model.outputs()[0]).name;
  const qat::FakeQuantSite* out_site = nullptr;
  for (const qat::FakeQuantSite& site : m->sites()) {
    if (std::find(site.values.begin(), site.values.end(), logits) != site.values.end()) out_site = &site;
  }
  REQUIRE(out_site != nullptr);
  const QParams out_q = out_site->module->CalculateQParams().value();
  for (int64_t i = 0; i < int8_logits.NumElements(); ++i) {
    run.max_logit_diff_lsb = std::max<double>(
        run.max_logit_diff_lsb, std::abs(int8_logits.data<float>()[i] - simulated.data<float>()[i]) / out_q.scale());
  }
  return run;
}

void Print(const char* what, double float_accuracy, double ptq, const QatRun& qat, uint64_t seed) {
  std::printf("qat: digits CNN, %s: float %.2f%%, PTQ int8 %.2f%%, QAT fake-quant %.2f%%, QAT int8 %.2f%% (seed %d, "
              "max |int8 - simulated| logit %.0f LSB)\n",
              what, float_accuracy, ptq, qat.fake_quant_accuracy, qat.int8_accuracy, static_cast<int>(seed),
              qat.max_logit_diff_lsb);
}

TEST_CASE("QAT of the digits CNN: int8 at least as accurate as PTQ, and recovers narrow weights", "[qat]") {
  const Context context = Context::ForIsas(DetectedIsas(), 1);
  const Graph model = ReadOnnxModel(kModels + "digits_cnn.onnx").value();
  const double float_accuracy =
      testing::Top1Percent(Run(model, FloatOpRegistry(), Digits().split.test_x, context), Digits().split.test_y);
  CHECK(float_accuracy > 90.0);  // the committed model: 94.17%
  // One seeded run per setting. Over seeds 1-6: 8-bit QAT int8 94.44-95.00% (PTQ 94.44%); 4-bit per-tensor
  // 93.61-95.56% (PTQ 94.72%); 3-bit per-tensor 91.94-93.61% (PTQ 85.56%; half the loss back is 89.86%).
  constexpr uint64_t kSeed = 1;
  SECTION("8-bit, x86 presets") {
    const Weights w;
    const double ptq = PtqAccuracy(model, w, context);
    const QatRun qat = Qat(model, w, {}, kSeed, context);
    Print(w.ToString().c_str(), float_accuracy, ptq, qat, kSeed);
    CHECK(qat.int8_accuracy >= ptq);
    CHECK(std::abs(qat.int8_accuracy - qat.fake_quant_accuracy) <= 0.6);  // at most 2 of 360 images
    CHECK(qat.max_logit_diff_lsb <= 1.01);  // requantization rounding, not propagated far at 8 bits
  }
  SECTION("4-bit per-tensor weights") {
    // Not hard for this model: PTQ keeps float accuracy, and so does QAT (within 1 point, noise of 360 images).
    const Weights w{.per_tensor = true, .quant_min = -8, .quant_max = 7};
    const double ptq = PtqAccuracy(model, w, context);
    const QatRun qat = Qat(model, w, {}, kSeed, context);
    Print(w.ToString().c_str(), float_accuracy, ptq, qat, kSeed);
    CHECK(qat.int8_accuracy >= float_accuracy - 1.0);
    CHECK(qat.max_logit_diff_lsb <= 2.01);
  }
  SECTION("3-bit per-tensor weights: the hard setting") {
    const Weights w{.per_tensor = true, .quant_min = -4, .quant_max = 3};
    const double ptq = PtqAccuracy(model, w, context);
    const QatRun qat = Qat(model, w, {.epochs = 4, .lr = 0.002, .cosine = true}, kSeed, context);
    Print(w.ToString().c_str(), float_accuracy, ptq, qat, kSeed);
    CHECK(float_accuracy - ptq >= 3.0);  // PTQ loses accuracy (8.6 points)
    CHECK(qat.int8_accuracy >= ptq + 0.5 * (float_accuracy - ptq));
    CHECK(std::abs(qat.int8_accuracy - qat.fake_quant_accuracy) <= 0.6);
    CHECK(qat.max_logit_diff_lsb <= 2.01);
  }
}

}  // namespace
}  // namespace octet
