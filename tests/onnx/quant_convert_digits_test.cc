// Static int8 on the exported digits models, end to end (ONNX import, Prepare, Calibrate, Convert, the int8
// kernels): on the 360 held-out images the int8 CNN and MLP stay within 0.3 accuracy points of float (at most one
// image worse) with MinMax, Histogram and Entropy activation observers and x86's per-channel weights. The figures
// (accuracy of both, SQNR of the logits) are printed for the record.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;


Tensor Run(const Graph& g, const OpRegistry& r, const Tensor& x) {
  return testing::RunWithInputShapes(g, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1), r, {x})[0];
}

TEST_CASE("Static int8 digits models stay within 0.3 accuracy points of float", "[onnx][convert]") {
  const Tensor labels = ReadNpy(kModels + "digits_test_labels.npy").value();
  REQUIRE(labels.dtype() == DType::kS32);
  for (const char* model : {"digits_mlp", "digits_cnn"}) {
    const bool cnn = std::string(model) == "digits_cnn";
    const Graph original = ReadOnnxModel(kModels + model + ".onnx").value();
    const Tensor test = testing::DigitsImages("digits_test_x.npy", cnn);
    const std::vector<Tensor> calib = SplitBatches(testing::DigitsImages("digits_calib_x.npy", cnn), 32).value();
    std::vector<std::vector<Tensor>> batches;
    for (const Tensor& t : calib) batches.push_back({t});
    const Tensor float_logits = Run(original, FloatOpRegistry(), test);
    const double float_accuracy = testing::Top1Percent(float_logits, labels);
    for (ObserverKind kind : {ObserverKind::kMinMax, ObserverKind::kHistogram, ObserverKind::kEntropy}) {
      INFO(model << " with " << ObserverClassName(kind));
      auto prepared = Prepare(original, testing::X86Mapping(kind));
      REQUIRE(prepared.ok());
      testing::CalibrateQuietly(*prepared, batches);
      ConvertReport report;
      auto converted = Convert(*prepared, {}, &report);
      INFO(converted.status().message());
      REQUIRE(converted.ok());
      for (const ConvertReport::FloatNode& f : report.kept_float) {
        INFO(f.node << " stayed float: " << f.reason);
        CHECK(f.op_type == "Constant");  // the CNN's reshape target, computed once
      }
      const Tensor int8_logits = Run(*converted, QuantizedGraphRegistry(), test);
      const double int8_accuracy = testing::Top1Percent(int8_logits, labels);
      const double sqnr = testing::TensorSqnrDb(float_logits, int8_logits);
      std::printf("convert: %s, %s activations: float %.2f%%, int8 %.2f%%, logits SQNR %.1f dB\n", model,
                  ObserverClassName(kind), float_accuracy, int8_accuracy, sqnr);
      CHECK(float_accuracy > 85.0);  // the committed models (94.2% and 89.4%)
      CHECK(int8_accuracy >= float_accuracy - 0.3);
      CHECK(sqnr > 20.0);  // 8-bit logits of a small network: well above 20 dB
    }
  }
}

}  // namespace
}  // namespace octet
