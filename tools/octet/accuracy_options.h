// The accuracy passes of `octet quantize` (--equalize, --adaround, --bias-correction): their flags, and running them on
// the float graph before Prepare (quant/equalize.h, quant/adaround.h, quant/bias_correction.h) with a report of what
// each changed.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/qconfig_mapping.h"

namespace octet::cli {

struct AccuracyFlags {
  bool equalize = false;
  std::string relu6 = "refuse";  // refuse | relu
  bool no_high_bias_absorption = false;
  bool bias_correction = false;
  std::string bias_correction_mode = "empirical";  // empirical | analytic
  bool adaround = false;
  int adaround_iters = 1000;

  void AddTo(CLI::App* app);
  bool any() const { return equalize || bias_correction || adaround; }
  // Usage errors (exit 2): unknown values, the passes with a mode other than static.
  Status CheckUsage(const std::string& mode) const;
};

struct AccuracyPasses {
  std::string report;  // what each step changed, for stdout
  // With --bias-correction: the graph with corrected biases, to Prepare and Convert; calibrate the graph without them
  // and move its activation observers over (TransferActivationObservers), since the corrected float graph adds the
  // weight-error compensation on top of float activations that the int8 graph does not have.
  std::optional<Graph> bias_corrected;
  // With --adaround: the qparams of each rounded weight, by value name, to fix in the prepared graph after
  // calibration (FixWeightQParams) so Convert keeps the learned rounding.
  std::map<std::string, QParams> fixed_weight_qparams;
};

// Folds BatchNorms (keeping their statistics) and, with --equalize, equalizes `graph` in place; with --adaround, moves
// each weight onto the rounding AdaRound learns on `calibration` (in place); with --bias-correction, returns a copy
// with corrected biases (for the weight qparams `mapping` gives; the empirical mode measures on `calibration`). The
// report: per layer, the per-tensor weight scale, weight SQNR (whole tensor and worst channel) and channel-range spread
// before and after equalization, the pairs, what was skipped and why, and the bias shifts. `power_of_two_weights`: the
// weights will be quantized with power-of-two scales (--target), which the correction must use.
Result<AccuracyPasses> RunAccuracyPasses(const AccuracyFlags& flags, Graph& graph, const QConfigMapping& mapping,
                                         std::span<const std::vector<Tensor>> calibration, const Context& context,
                                         bool power_of_two_weights = false);

}  // namespace octet::cli
