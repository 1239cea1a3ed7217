// The numeric guard after Convert (DESIGN.md §6, issue 21): runs the int8 graph against its float graph on
// samples the calibration did not see (or the calibration set itself when it is small), measures the SQNR of every
// graph output, and when the worst is below a threshold names the layers most likely at fault -- lowest shadow SQNR
// (each int8 node against its float twin on the same input, CompareModelStub) and most requantization clipping
// (layer_counters.h) -- and measures the fixes it can check (another activation observer, a layer kept float), so
// that a quantized model is never silently broken and the advice is measured, not guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/qconfig_mapping.h"

namespace octet {

// Default threshold of the guard: below 15 dB output SQNR (an error of ~18% of the signal's RMS) a classifier's
// decisions or a regressor's values are visibly wrong; healthy int8 models are at 25-45 dB.
inline constexpr double kDefaultGuardMinSqnrDb = 15.0;

struct GuardOptions {
  double min_sqnr_db = kDefaultGuardMinSqnrDb;
  int worst_layers = 5;                // how many layers each list names
  double min_clipped_fraction = 0.01;  // a layer is listed for clipping above this fraction of its outputs
  const Context* context = nullptr;    // runs both graphs (nullptr: a default context)
};

struct GuardOutput {
  std::string name;
  double sqnr_db = 0;  // +inf when the int8 output equals the float one exactly
};

struct GuardLayer {
  std::string node;
  std::string op;                          // the int8 graph's op type
  std::optional<double> shadow_sqnr_db;    // absent when the node has no float twin output to compare
  std::optional<double> clipped_fraction;  // absent for ops that do not requantize
};

// A fix the guard tried: the quantization redone one way, and the worst output SQNR it gives on the same samples.
struct GuardFix {
  std::string option;  // how to ask for it: "--activation-observer minmax", "--skip conv2"
  double sqnr_db = 0;
  bool passes = false;
};

struct GuardReport {
  double min_sqnr_db = kDefaultGuardMinSqnrDb;
  int64_t samples = 0;               // samples (axis 0 of the first input) the guard ran
  std::string samples_source;        // "held-back" (not calibrated on) or "calibration" (the calibration set itself)
  std::vector<GuardOutput> outputs;  // every f32 graph output, in graph order
  double worst_sqnr_db = 0;
  bool passed = true;
  // Filled when the guard fails (empty otherwise, to keep a passing guard cheap):
  std::vector<GuardLayer> worst_by_shadow;    // lowest shadow SQNR first (exact nodes left out)
  std::vector<GuardLayer> worst_by_clipping;  // most clipped first, above GuardOptions::min_clipped_fraction
  std::vector<GuardFix> fixes;                // as tried, see MeasureGuardFixes
};

// Which calibration batches the guard runs on. With at least kGuardMinBatchesToHoldBack batches, the last
// max(1, n / 5) are held back: calibration does not see them, so the guard measures the model on data it was not
// fitted to (source "held-back"). With fewer, holding any back would starve calibration, so the guard runs on the
// calibration set itself (source "calibration").
inline constexpr size_t kGuardMinBatchesToHoldBack = 5;
struct GuardSplit {
  std::span<const std::vector<Tensor>> calibration;
  std::span<const std::vector<Tensor>> guard;
  std::string source;
};
GuardSplit SplitGuardBatches(std::span<const std::vector<Tensor>> batches);

// Runs `quantized` (static, dynamic or weight-only) and `float_graph` on `batches` (one tensor per graph input in
// the float graph's input order) and fills outputs, worst_sqnr_db and passed (worst_sqnr_db >= min_sqnr_db); when
// it fails, also the worst layers (a second pass with shadows and clipping counters). `samples_source` is recorded
// as given. Fails on no batch, a graph that does not run, or no f32 graph output.
Result<GuardReport> CheckQuantization(const Graph& float_graph, const Graph& quantized,
                                      std::span<const std::vector<Tensor>> batches, std::string samples_source,
                                      const GuardOptions& options = {});

// What MeasureGuardFixes may redo.
struct GuardFixCandidates {
  // Static quantization: the calibrated PreparedGraph and the ConvertOptions that made the int8 graph; each of the
  // report's worst layers (by shadow SQNR, then by clipping; at most `keep_float_layers` distinct nodes) is tried
  // kept float (ConvertOptions::keep_float, no recalibration), option "--skip NODE". Nullptr: none tried.
  const PreparedGraph* calibrated = nullptr;
  ConvertOptions convert;
  int keep_float_layers = 3;
  // Whole alternative configurations (another activation observer...): each is prepared, calibrated on
  // `calibration_batches` and converted with `convert`, under its option text.
  struct Alternative {
    std::string option;
    QConfigMapping mapping;
  };
  std::vector<Alternative> alternatives;
  PrepareOptions prepare;
  std::span<const std::vector<Tensor>> calibration_batches;
};

// Tries each candidate fix on `batches` (the guard's samples) and appends it to report.fixes with the worst output
// SQNR it gives. A candidate that fails to quantize or run is left out (it is advice, not the result). Fails only
// when the float graph does not run.
Status MeasureGuardFixes(const Graph& float_graph, std::span<const std::vector<Tensor>> batches,
                         const GuardFixCandidates& candidates, const GuardOptions& options, GuardReport& report);

// The report as JSON (what `octet quantize` stores under the .octet metadata key "guard" and `octet inspect`
// shows): {"passed", "min_sqnr_db", "samples", "samples_source", "worst_sqnr_db", "outputs": [{"name",
// "sqnr_db"}], "worst_by_shadow": [{"node", "op", "shadow_sqnr_db"?, "clipped_fraction"?}], "worst_by_clipping":
// [...], "fixes": [{"option", "sqnr_db", "passes"}]}; infinite SQNR (exact) is null.
nlohmann::json GuardReportJson(const GuardReport& report);
// The inverse of GuardReportJson; fails naming the key that is missing or of the wrong type.
Result<GuardReport> GuardReportFromJson(const nlohmann::json& json);

// The report as text lines for a terminal: the samples, each output's SQNR against the threshold, and when it
// fails the worst layers, the measured fixes and what to do next (the options that fix it).
std::string FormatGuardReport(const GuardReport& report);

}  // namespace octet
