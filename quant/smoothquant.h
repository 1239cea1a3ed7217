// SmoothQuant (Xiao et al. 2023, "SmoothQuant: Accurate and Efficient Post-Training Quantization for Large Language
// Models"): a few activation channels of trained transformers are 10-100x the others, so one per-tensor activation
// scale leaves the other channels a handful of levels, while the weights that read them are easy to quantize. The
// pass moves part of that range from the activation into the weight, per input channel c:
//   s_c = max|X_c|^alpha / max|W_c|^(1 - alpha)     (max|X_c| over calibration data, max|W_c| over every consumer)
//   X_c / s_c is folded into the LayerNormalization that produces X (Scale_c and B_c divided by s_c),
//   W[c, :] * s_c into each consumer's weight,
// which leaves the float model unchanged (within float rounding). It runs on the float graph before Prepare, after
// the transformer fusion (quant/fuse.h), so a decomposed LayerNorm counts too.
// A LayerNormalization is smoothed when its output Y is no graph output and every reader of Y is a MatMul(Y, W) with
// a constant f32 [C, N] weight or a Gemm(Y, W) with transA 0 and a constant f32 weight; the report says why others
// are left alone (a LayerNorm whose output also feeds a residual Add, as in post-LN encoders, cannot be smoothed
// without changing the model). Shared constants are copied, not changed in place.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

struct SmoothQuantOptions {
  // Migration strength in [0, 1]: at 1 every channel of X / s has max|.| 1 and the weights carry the range; at 0 the
  // weights' rows are normalised to max|.| 1 instead. 0.5 is the paper's default (and `octet quantize
  // --smoothquant` without a value); the paper uses up to 0.75-0.85 for models with stronger outliers.
  float alpha = 0.5f;
};

struct SmoothQuantReport {
  struct Layer {
    std::string layer_norm;              // the LayerNormalization smoothed
    std::vector<std::string> consumers;  // the MatMul / Gemm nodes whose weights took the factors
    float activation_max_before = 0.0f;  // max over channels of max|X_c|, before and after
    float activation_max_after = 0.0f;
    float channel_spread_before = 0.0f;  // max_c max|X_c| / median_c max|X_c|, before and after
    float channel_spread_after = 0.0f;
    float min_factor = 1.0f, max_factor = 1.0f;  // range of s_c
  };
  struct Skipped {
    std::string layer_norm;
    std::string reason;
  };
  std::vector<Layer> layers;  // graph order
  std::vector<Skipped> skipped;
};

// Smooths every LayerNormalization of `graph` that qualifies (see above), measuring max|X_c| on `batches` (one tensor
// per graph input each; at least one). Fails on alpha outside [0, 1], no batches, or a batch the graph cannot run.
Result<SmoothQuantReport> SmoothQuant(Graph& graph, std::span<const std::vector<Tensor>> batches,
                                      const Context& context, const SmoothQuantOptions& options = {});

// The report as text lines for the command line: one line per layer, then the skipped ones.
std::string SmoothQuantReportText(const SmoothQuantReport& report, float alpha);

}  // namespace octet
