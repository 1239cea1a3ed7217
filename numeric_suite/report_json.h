// The numeric-suite report as JSON, schema version 1 (docs/report_schema.md): what `octet compare` writes and
// numeric_suite/report_html renders.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/shape.h"
#include "core/status.h"
#include "numeric_suite/compare_model.h"
#include "numeric_suite/compare_weights.h"
#include "numeric_suite/report_validate.h"  // kReportSchemaVersion

namespace octet {

// Bins of the float vs dequantized weight histograms.
inline constexpr int kWeightHistogramBins = 64;

// Where the compared models and data came from (the report's header).
struct ReportSources {
  std::string float_model;      // "digits_cnn.onnx"
  std::string quantized_model;  // "digits_cnn.octet"
  struct Input {
    std::string name;
    std::string file;
    Shape shape;
  };
  std::vector<Input> inputs;
};

// The report: "weights" from CompareWeights (metrics, qscheme, a 64-bin histogram of the float and the dequantized
// weight over their common [min, max], per-output-channel float ranges and qparams), "activations" (propagated, with
// the clipped fraction and the accumulator headroom), "shadow" and "outputs" from a PreparedModelOutputs' results.
// Non-finite metrics become null; an SQNR of +inf (identical tensors) is null with "exact": true. Fails when a
// weight's qparams do not fit its shape.
Result<nlohmann::json> BuildReportJson(const ReportSources& sources, std::span<const WeightComparison> weights,
                                       std::span<const ValueComparison> activations,
                                       std::span<const ValueComparison> shadow,
                                       std::span<const ValueComparison> outputs);

}  // namespace octet
