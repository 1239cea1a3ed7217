// Bias correction (Nagel et al. 2019, "Data-Free Quantization", §4.2): quantizing a layer's weight W to W~ shifts the
// mean of its output by E[(W~ - W) x] per output channel, a bias that per-tensor weights (whose small channels round
// coarsely) make large. Folding the negated shift into the layer's bias removes it. Run on the float graph (after
// BatchNorm folding and equalization, before Prepare), with the weight qparams Prepare will use.
//   * empirical: E[(W~ - W) x] measured per output channel on calibration data (the mean over batch and spatial
//     positions of the layer applied to its float input with weight W~ - W and no bias);
//   * analytic: from the pre-activation statistics of folded BatchNorms (quant/batch_norm_stats.h): when the layer
//     reads Relu(y) or y (also through GlobalAveragePool, Flatten) of a layer with known N(mean, std^2) output, E[x_c]
//     is the clipped normal's mean (or mean), and the shift is sum over the weight of (W~ - W) E[x] (ignoring zero
//     padding at borders). Layers whose input has no statistics are left alone (the report says so).
// Only the weights' rounding is corrected; the error activation quantization adds upstream is not.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/batch_norm_stats.h"
#include "quant/prepare.h"
#include "quant/qconfig_mapping.h"

namespace octet {

enum class BiasCorrectionMode { kEmpirical, kAnalytic };

struct BiasCorrectionReport {
  struct Layer {
    std::string node;
    float max_abs_shift = 0.0f;    // largest |E[(W~ - W) x]| over output channels,
                                   // folded into the bias
    float bias_rms_before = 0.0f;  // RMS of the bias before (0 when it had none)
  };
  struct Skipped {
    std::string node;
    std::string reason;
  };
  std::vector<Layer> layers;  // graph order
  std::vector<Skipped> skipped;
};

// The qparams each Conv/Gemm/MatMul weight of `graph` gets from `mapping` (by node name), as Prepare computes them (on
// a copy of the graph; `graph` is not changed).
Result<std::map<std::string, QParams>> WeightQParamsByNode(const Graph& graph, const QConfigMapping& mapping,
                                                           const Context* context);

// Corrects the bias of every Conv/Gemm of `graph` named in `weight_qparams`. Empirical mode runs `batches` (one tensor
// per graph input each) through the float graph and needs at least one; analytic mode reads `stats`. `rounded` (by
// node name, optional): weights already on their grid (AdaRound's W~), whose error W~ - W replaces nearest rounding's.
Result<BiasCorrectionReport> CorrectBias(Graph& graph, const std::map<std::string, QParams>& weight_qparams,
                                         BiasCorrectionMode mode, std::span<const std::vector<Tensor>> batches,
                                         const PreActivationStats* stats, const Context& context,
                                         const std::map<std::string, Tensor>* rounded = nullptr);

// W~ - W for weight `w` quantized with `qparams` (per tensor, or per channel along qparams.axis()).
Result<Tensor> WeightQuantizationError(const Tensor& w, const QParams& qparams);

// Calibrating the bias-corrected float graph would observe W x + b - E[(W~ - W) x]: float activations plus a
// compensation only the int8 graph needs, which widens ranges. So calibrate the graph before correction (`from`),
// Prepare the corrected one (`to`, the same nodes and values) and give `to` clones of `from`'s activation observers,
// matched by the name of the first value each observes. Fails naming a value `from` does not observe.
Status TransferActivationObservers(const PreparedGraph& from, PreparedGraph& to);

}  // namespace octet
