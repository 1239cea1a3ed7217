// The committed outlier encoder (tests/data/models/make_outlier_encoder.py: a pre-LN encoder whose LayerNorm outputs
// have four channels 50-100x the others, float-equivalent to the model without them): static int8 loses most of
// its SQNR to them, and SmoothQuant (quant/smoothquant.h) wins at least 6 dB back while the float model stays the
// same.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/quantized_registry.h"
#include "quant/smoothquant.h"
#include "tests/test_util.h"

namespace octet {
namespace {

double StaticSqnrDb(const Graph& model, const Graph& g, const std::vector<std::vector<Tensor>>& calib, const Tensor& x,
                    const Context& context) {
  QConfigMapping mapping;
  mapping.SetGlobal(GetDefaultQConfig("x86").value());
  auto prepared = Prepare(g, mapping);
  REQUIRE(prepared.ok());
  REQUIRE(Calibrate(*prepared, context, calib).ok());
  ConvertReport report;
  auto q = Convert(*prepared, {}, &report);
  REQUIRE(q.ok());
  CHECK(report.kept_float.empty());
  const Tensor yf = testing::RunFirstOutput(model, context, QuantFloatRegistry(), x);
  const Tensor yq = testing::RunFirstOutput(*q, context, QuantizedGraphRegistry(), x);
  return testing::TensorSqnrDb(yf, yq);
}

TEST_CASE("SmoothQuant wins back at least 6 dB of static int8 SQNR on the outlier encoder", "[onnx]") {
  const Graph model = ReadOnnxModel(testing::kModels + "outlier_encoder.onnx").value();
  const Tensor x = ReadNpy(testing::kModels + "outlier_encoder.input0.npy").value();
  const Tensor all = ReadNpy(testing::kModels + "outlier_encoder.calib.npy").value();
  const int64_t n = all.shape().dim(0), t = all.shape().dim(1), d = all.shape().dim(2);
  std::vector<std::vector<Tensor>> calib;
  for (int64_t i = 0; i < n; ++i) {
    Tensor b = Tensor::Create(DType::kF32, Shape{1, t, d}).value();
    std::copy(all.data<float>() + i * t * d, all.data<float>() + (i + 1) * t * d, b.data<float>());
    calib.push_back({b});
  }
  const Context context = testing::ContextFor(Isa::kScalar);
  Graph smoothed = model;
  auto report = SmoothQuant(smoothed, calib, context);
  REQUIRE(report.ok());
  CHECK(report->layers.size() == 4);  // ln1 and ln2 of both blocks
  CHECK(report->skipped.empty());
  for (const auto& l : report->layers) CHECK(l.channel_spread_after * 4 < l.channel_spread_before);
  // Float-equivalent.
  const Tensor y0 = testing::RunFirstOutput(model, context, QuantFloatRegistry(), x);
  const Tensor y1 = testing::RunFirstOutput(smoothed, context, QuantFloatRegistry(), x);
  CHECK(testing::TensorSqnrDb(y0, y1) > 80.0);
  const double before = StaticSqnrDb(model, model, calib, x, context);
  const double after = StaticSqnrDb(model, smoothed, calib, x, context);
  INFO("static int8 SQNR " << before << " dB, with SmoothQuant (alpha 0.5) " << after << " dB");
  CHECK(after >= before + 6.0);
}

}  // namespace
}  // namespace octet
