// --equalize and --bias-correction for `octet quantize` (see accuracy_options.h).
#include "tools/octet/accuracy_options.h"

#include <fmt/format.h>

#include "quant/adaround.h"
#include "quant/batch_norm_stats.h"
#include "quant/bias_correction.h"
#include "quant/equalize.h"
#include "quant/fuse.h"
#include "quant/target_spec.h"

namespace octet::cli {

void AccuracyFlags::AddTo(CLI::App* app) {
  app->add_flag("--equalize", equalize,
                "Cross-layer equalization with high-bias absorption before "
                "quantizing (static): balances the "
                "per-channel weight ranges of consecutive Conv/Gemm layers, "
                "for per-tensor weights");
  app->add_option("--equalize-relu6", relu6,
                  "What --equalize does at a ReLU6 (Clip 0..6) between two "
                  "layers: refuse (skip the pair) or relu "
                  "(replace it by Relu, as AIMET does; changes the float model "
                  "where activations exceed 6)")
      ->capture_default_str();
  app->add_flag("--no-high-bias-absorption", no_high_bias_absorption, "--equalize without high-bias absorption");
  app->add_flag("--bias-correction", bias_correction,
                "Fold the mean output error that weight quantization causes "
                "into each Conv/Gemm bias (static)");
  app->add_option("--bias-correction-mode", bias_correction_mode,
                  "empirical (measured on the --calib data) or analytic (from "
                  "BatchNorm statistics)")
      ->capture_default_str();
  app->add_flag("--adaround", adaround,
                "Learn each weight's rounding (up or down) layer by layer on the --calib data (AdaRound, static) "
                "instead of rounding to nearest; for low-bit weights (--weight-bits)");
  app->add_option("--adaround-iters", adaround_iters, "AdaRound: optimizer iterations per layer")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
}

Status AccuracyFlags::CheckUsage(const std::string& mode) const {
  if (relu6 != "refuse" && relu6 != "relu") {
    return InvalidArgument("--equalize-relu6 must be refuse or relu, got '{}'", relu6);
  }
  if (bias_correction_mode != "empirical" && bias_correction_mode != "analytic") {
    return InvalidArgument("--bias-correction-mode must be empirical or analytic, got '{}'", bias_correction_mode);
  }
  if (any() && mode != "static") {
    return InvalidArgument("--equalize, --adaround and --bias-correction apply to --mode static only, got --mode {}",
                           mode);
  }
  return OkStatus();
}

Result<AccuracyPasses> RunAccuracyPasses(const AccuracyFlags& flags, Graph& graph, const QConfigMapping& mapping,
                                         std::span<const std::vector<Tensor>> calibration, const Context& context,
                                         bool power_of_two_weights) {
  AccuracyPasses result;
  std::string out;
  FoldConstantNodes(graph);
  std::vector<std::string> folded;
  OCTET_ASSIGN_OR_RETURN(PreActivationStats stats, FoldBatchNormKeepingStats(graph, &folded));
  if (flags.equalize) {
    EqualizeOptions options;
    options.absorb_high_bias = !flags.no_high_bias_absorption;
    options.relu6 = flags.relu6 == "relu" ? Relu6Policy::kReplaceWithRelu : Relu6Policy::kRefuse;
    OCTET_ASSIGN_OR_RETURN(const EqualizeReport r, EqualizeCrossLayer(graph, &stats, options));
    out += fmt::format(
        "equalize: {} pairs in {} sweeps ({} BatchNorms folded "
        "first, their statistics kept)\n",
        r.pairs.size(), r.sweeps, folded.size());
    for (const auto& p : r.pairs) {
      out += fmt::format("  pair {} -> {} through {}, {} channels", p.first, p.second, p.through, p.channels);
      if (p.absorbed_channels > 0) {
        out += fmt::format("; high bias absorbed on {} channels (largest {:.4g})", p.absorbed_channels, p.max_absorbed);
      }
      out += "\n";
    }
    out +=
        "  per-tensor int8 weight: scale before -> after, SQNR of the whole tensor and of its worst channel "
        "before -> after, channel range spread before -> after\n";
    for (const auto& l : r.layers) {
      out += fmt::format(
          "  {}: scale {:.4g} -> {:.4g}, SQNR {:.1f} dB (worst channel {:.1f}) -> {:.1f} dB ({:.1f}), "
          "spread {:.3g}x -> {:.3g}x\n",
          l.node, l.scale_before, l.scale_after, l.sqnr_db_before, l.worst_channel_sqnr_db_before, l.sqnr_db_after,
          l.worst_channel_sqnr_db_after, l.spread_before, l.spread_after);
    }
    for (const auto& s : r.skipped) out += fmt::format("  skipped {} -> {}: {}\n", s.first, s.second, s.reason);
    for (const auto& n : r.relu6_replaced)
      out += fmt::format("  replaced ReLU6 '{}' by Relu (--equalize-relu6 relu)\n", n);
  }
  std::map<std::string, QParams> qparams;
  if (flags.adaround || flags.bias_correction) {
    OCTET_ASSIGN_OR_RETURN(qparams, WeightQParamsByNode(graph, mapping, &context));
    if (power_of_two_weights) {
      for (auto& [node, q] : qparams) {
        OCTET_ASSIGN_OR_RETURN(q, RoundScaleToPowerOfTwo(q));
      }
    }
  }
  AdaRoundResult adaround;
  if (flags.adaround) {
    AdaRoundOptions options;
    options.iterations = flags.adaround_iters;
    OCTET_ASSIGN_OR_RETURN(adaround, AdaRound(graph, qparams, calibration, context, options));
    out += fmt::format("adaround: {} layers, {} iterations each, on the float inputs of {} calibration batches\n",
                       adaround.report.layers.size(), options.iterations, calibration.size());
    out +=
        "  reconstruction loss (mean ||W x - W~ x||^2) with nearest rounding -> AdaRound, weights rounded the other "
        "way\n";
    for (const auto& l : adaround.report.layers) {
      out += fmt::format("  {}: {:.4g} -> {:.4g}, {} of {} weights{}\n", l.node, l.loss_nearest, l.loss_adaround,
                         l.changed, l.weights, l.loss_adaround > l.loss_nearest ? " (worse than nearest)" : "");
    }
    for (const auto& s : adaround.report.skipped) out += fmt::format("  skipped {}: {}\n", s.node, s.reason);
    result.fixed_weight_qparams = adaround.weight_qparams;
  }
  if (flags.bias_correction) {
    // Corrected biases go into a copy: calibration observes the graph without them (see RunAccuracyPasses).
    Graph corrected = graph;
    const bool empirical = flags.bias_correction_mode == "empirical";
    OCTET_ASSIGN_OR_RETURN(
        const BiasCorrectionReport r,
        CorrectBias(corrected, qparams, empirical ? BiasCorrectionMode::kEmpirical : BiasCorrectionMode::kAnalytic,
                    calibration, &stats, context, flags.adaround ? &adaround.rounded : nullptr));
    out += fmt::format("bias correction ({}{}): {} layers corrected\n", flags.bias_correction_mode,
                       empirical ? fmt::format(", {} calibration batches", calibration.size()) : "", r.layers.size());
    for (const auto& l : r.layers) {
      out += fmt::format("  {}: largest shift {:.4g} (bias RMS before {:.4g})\n", l.node, l.max_abs_shift,
                         l.bias_rms_before);
    }
    for (const auto& s : r.skipped) out += fmt::format("  skipped {}: {}\n", s.node, s.reason);
    if (flags.adaround) OCTET_RETURN_IF_ERROR(ApplyRoundedWeights(corrected, adaround.rounded));
    result.bias_corrected = std::move(corrected);
  }
  if (flags.adaround) OCTET_RETURN_IF_ERROR(ApplyRoundedWeights(graph, adaround.rounded));
  result.report = std::move(out);
  return result;
}

}  // namespace octet::cli
