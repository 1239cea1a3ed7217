// Cross-layer equalization and high-bias absorption (Nagel et al. 2019, "Data-Free Quantization Through Weight
// Equalization and Bias Correction", §4.1), a float graph pass run after BatchNorm folding and before Prepare.
//
// Equalization: for two layers in a row, y = W2 f(W1 x + b1) + b2, with f = Relu or nothing (f(s x) = s f(x) for
// s > 0), dividing output channel c of the first layer (W1[c], b1[c]) by s[c] and multiplying input channel c of the
// second by s[c] changes nothing in exact arithmetic. With
//   s[c] = sqrt(r1[c] / r2[c])   (r1: max |W1| over output channel c, r2: max |W2| over what reads input channel c)
// both ranges become sqrt(r1 r2), so per-tensor weight quantization of either layer loses less. Pairs are Conv (any
// group count: depthwise included) and Gemm (torch.nn.Linear) with constant weights, joined through Relu, nothing, or
// GlobalAveragePool + Flatten(axis 1) (the classifier head), where every value in between has no other reader. The pass
// sweeps all pairs until no scale moves by more than 0.1% (a layer in two pairs is pulled by both).
//
// ReLU6 (Clip with min 0, max 6): a per-channel rescale would turn its bound into 6 / s[c], which one Clip cannot
// express. By default such pairs are skipped with that reason; Relu6Policy::kReplaceWithRelu replaces the Clip by Relu
// first (what AIMET does), which changes the float model wherever an activation exceeds the bound.
//
// High-bias absorption (optional): when the first layer's pre-activation statistics are known (its folded BatchNorm:
// quant/batch_norm_stats.h), h[c] = max(0, mean[c] - 3 std[c]) is moved out of b1 into b2 (b1 -= h, b2 += W2 h):
// Relu(y - h) = Relu(y) - h wherever y >= h, i.e. for all but ~0.1% of values under a normal pre-activation. It shrinks
// the activation range the second layer reads. Only where the second layer sees the shift everywhere: Relu between the
// two, and no zero padding in the second (a 1x1 Conv or a Gemm).
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "quant/batch_norm_stats.h"

namespace octet {

enum class Relu6Policy { kRefuse, kReplaceWithRelu };

struct EqualizeOptions {
  bool absorb_high_bias = true;
  Relu6Policy relu6 = Relu6Policy::kRefuse;
  int max_sweeps = 20;
};

struct EqualizeReport {
  struct Pair {
    std::string first;
    std::string second;
    std::string through;  // "Relu", "nothing", "Relu, GlobalAveragePool, Flatten", ...
    int64_t channels = 0;
    int64_t absorbed_channels = 0;  // channels with a high bias moved into `second`
    float max_absorbed = 0.0f;      // the largest h[c] moved
  };
  // What equalization changed in a layer's weight, per-tensor symmetric int8 (scale = max |w| / 127.5, as
  // MinMaxObserver's qint8 symmetric): its scale, the weight's SQNR after quantize-dequantize, and the spread of
  // per-output-channel ranges (largest over smallest nonzero).
  struct Layer {
    std::string node;
    float scale_before = 0.0f, scale_after = 0.0f;
    float sqnr_db_before = 0.0f, sqnr_db_after = 0.0f;
    // The lowest per-output-channel SQNR under the per-tensor scale: where the spread does its damage (the whole
    // tensor's SQNR is dominated by its largest channels).
    float worst_channel_sqnr_db_before = 0.0f, worst_channel_sqnr_db_after = 0.0f;
    float spread_before = 0.0f, spread_after = 0.0f;
  };
  struct Skipped {
    std::string first;
    std::string second;
    std::string reason;
  };
  std::vector<Pair> pairs;
  std::vector<Layer> layers;  // graph order
  std::vector<Skipped> skipped;
  std::vector<std::string> relu6_replaced;  // Clip nodes made Relu (Relu6Policy::kReplaceWithRelu)
  int sweeps = 0;
};

// Equalizes `graph` in place. `stats` (may be null) are the pre-activation statistics of folded BatchNorms; they are
// rescaled with their layers and used for high-bias absorption. Fails only on malformed attributes.
Result<EqualizeReport> EqualizeCrossLayer(Graph& graph, PreActivationStats* stats, const EqualizeOptions& options = {});

// Per-tensor symmetric int8 weight SQNR in dB of `w` (the report's measure); +inf for an all-zero tensor.
float PerTensorWeightSqnrDb(const Tensor& w);

}  // namespace octet
