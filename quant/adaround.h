// AdaRound (Nagel et al. 2020, "Up or Down? Adaptive Rounding for Post-Training Quantization"): instead of rounding
// each weight to the nearest grid point, learn per weight whether to round down or up so that the layer's output on
// calibration data changes least. Per layer, with W the float weight, s its scale and floor(W/s) the grid point below:
//   W~(V) = s * clamp(floor(W/s) + h(V), qmin - zp, qmax - zp),  h(V) = clip(sigmoid(V) * (zeta - gamma) + gamma, 0, 1)
//   loss  = mean over the layer's input patches x of ||W x - W~ x||^2  +  lambda * sum (1 - |2 h(V) - 1|^beta)
// zeta 1.1, gamma -0.1; beta anneals linearly from 20 to 2 after a warm-up without the regularizer; Adam on V, from
// V with h(V) = the fractional part of W/s (nearest rounding's starting point); at the end h >= 0.5 rounds up. The
// regularizer can leave a layer's loss above nearest rounding's (the report shows both); such layers are kept as
// learned, since on the spread MobileNetV2 reverting them to nearest lost 5 dB of output SQNR.
// The inputs x are the float model's (the layer's input when the float graph runs the calibration batches), or with
// AdaRoundOptions::quantized_inputs the paper's asymmetric form: the float output W x against W~ xq, xq the input in the
// model whose earlier layers are already rounded.
// The reconstruction term is quadratic in W~ - W, so it only needs each layer's Gram matrix E[x x^T] (per group of a
// grouped Conv): one pass over the calibration data, then an exact optimizer loop of its own (no sampling, no autograd
// tape: the gradient is 2 (W~ - W) E[x x^T] through h), deterministic.
// Handles Conv (2-D, NOTSET/VALID padding), Gemm (alpha = beta = 1, no transA) and MatMul with a rank-2 constant
// weight; the result is the float weight moved onto the grid of its qparams, which Convert then quantizes exactly
// when the weight's qparams are fixed to the ones AdaRound used (FixWeightQParams).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/prepare.h"

namespace octet {

struct AdaRoundOptions {
  int iterations = 1000;         // per layer
  float regularization = 0.01f;  // lambda
  float beta_start = 20.0f;
  float beta_end = 2.0f;
  float warmup = 0.2f;           // the first fraction of the iterations, without the regularizer
  float learning_rate = 0.003f;  // Adam
  // The asymmetric reconstruction of the paper: minimise ||W x - W~ xq|| where xq is the layer's input in the model
  // whose earlier layers already have their rounded weights (layer by layer, two runs of the calibration data per
  // layer), so each layer also makes up for the rounding before it. Off: xq = x, the float model's input.
  bool quantized_inputs = false;
};

struct AdaRoundReport {
  struct Layer {
    std::string node;
    int64_t weights = 0;
    int64_t changed = 0;        // weights rounded the other way than to nearest
    double loss_nearest = 0.0;  // mean ||W x - W~ x||^2 over the layer's input patches
    double loss_adaround = 0.0;
  };
  struct Skipped {
    std::string node;
    std::string reason;
  };
  std::vector<Layer> layers;  // graph order
  std::vector<Skipped> skipped;
};

struct AdaRoundResult {
  std::map<std::string, Tensor> rounded;          // by node name: W~, the float weight on its grid
  std::map<std::string, QParams> weight_qparams;  // by the weight's value name: the qparams W~ is on
  AdaRoundReport report;
};

// One layer's problem, for tests and the graph pass: `rows` output channels of `k` weights each (row-major), row r in
// group r / (rows / gram.size()), whose Gram matrix is gram[group] (k x k, mean of x x^T over the input patches).
struct AdaRoundLayer {
  int64_t rows = 0;
  int64_t k = 0;
  std::vector<float> weight;        // rows * k
  std::vector<float> scale;         // per row
  std::vector<int32_t> zero_point;  // per row
  int32_t quant_min = -128;
  int32_t quant_max = 127;
  std::vector<std::vector<double>> gram;  // per group, k * k: E[xq xq^T] (xq = x for the symmetric loss)
  // The asymmetric loss only (empty otherwise), per group, k * k: cross[a * k + b] = E[x_a xq_b], float_gram E[x x^T].
  std::vector<std::vector<double>> cross;
  std::vector<std::vector<double>> float_gram;
};

// Quantized values (rows * k) by rounding to nearest, as Convert does.
std::vector<int32_t> RoundToNearest(const AdaRoundLayer& layer);
// Quantized values (rows * k) by AdaRound.
std::vector<int32_t> LearnRounding(const AdaRoundLayer& layer, const AdaRoundOptions& options);
// Mean over patches of ||W x - W~ xq||^2 summed over rows, for quantized values `q`: (W~ - W) gram (W~ - W)^T for the
// symmetric loss.
double ReconstructionLoss(const AdaRoundLayer& layer, std::span<const int32_t> q);

// AdaRound on every Conv/Gemm/MatMul of `graph` named in `weight_qparams` (by node name, as WeightQParamsByNode gives
// them), on the float graph's layer inputs over `batches` (one tensor per graph input each; at least one). `graph` is
// not changed; layers it cannot handle are skipped with the reason.
Result<AdaRoundResult> AdaRound(const Graph& graph, const std::map<std::string, QParams>& weight_qparams,
                                std::span<const std::vector<Tensor>> batches, const Context& context,
                                const AdaRoundOptions& options = {});

// Replaces the weight of each node named in `rounded` by its tensor.
Status ApplyRoundedWeights(Graph& graph, const std::map<std::string, Tensor>& rounded);

// Fixes the qparams of each weight slot whose value is named in `qparams` (ObserverSlot::fixed_qparams), so Convert
// quantizes the rounded weights on the grid AdaRound chose (an observer would compute a scale from W~'s own range).
// Run after RoundScalesToPowerOfTwo, whose rounding the qparams already include.
Status FixWeightQParams(PreparedGraph& prepared, const std::map<std::string, QParams>& qparams);

}  // namespace octet
