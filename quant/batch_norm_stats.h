// What folded BatchNorms tell about the layers they were folded into: the per-channel mean and standard deviation of a
// Conv/Gemm's output (its pre-activation), read from the BatchNorm that followed it. After folding, the output of a
// BatchNorm in inference mode is beta + gamma * x_hat, and on the data the statistics were gathered on x_hat has mean 0
// and variance 1: so mean = beta and std = |gamma| (Nagel et al. 2019, "Data-Free Quantization", §4.1-4.2). High-bias
// absorption and the analytic bias correction read them; cross-layer equalization keeps them up to date.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

struct ChannelStats {
  std::vector<float> mean;
  std::vector<float> std;
};

// By name of the Conv/Gemm node whose output the statistics describe.
using PreActivationStats = std::map<std::string, ChannelStats>;

// FoldBatchNorm (quant/fold_batch_norm.h) that also returns, for every BatchNorm it folded, the statistics of the
// folded node's output (keyed by that node's name). `folded`, when given, receives the BatchNorm names folded.
Result<PreActivationStats> FoldBatchNormKeepingStats(Graph& graph, std::vector<std::string>* folded = nullptr);

// E[relu(y)] for y ~ N(mean, std^2): std * phi(mean / std) + mean * Phi(mean / std) (the clipped normal's mean);
// max(mean, 0) when std is 0.
float ReluOfNormalMean(float mean, float std);

}  // namespace octet
