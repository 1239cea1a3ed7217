// PyTorch's default initialisation of the trainable parameters (reset_parameters of nn.Conv2d, nn.Linear,
// nn.BatchNorm2d, nn.LSTM), for training a graph from scratch:
//   Conv and Gemm/MatMul weights: kaiming_uniform_(a = sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in));
//   their biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the weight's fan_in;
//   BatchNormalization: scale 1, bias 0, running mean 0, running variance 1;
//   LSTM W, R and B: U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
// fan_in is in_channels / groups * kernel size for a Conv weight [OC, IC/g, k...], K for a Gemm weight (its [N, K]
// with transB, [K, N] without) and for a MatMul weight [K, N]. The draws come from std::mt19937_64 seeded with
// `seed` (the same values everywhere, not PyTorch's generator).
#pragma once

#include <cstdint>

#include "core/graph.h"
#include "core/status.h"

namespace octet::training {

// Rewrites the graph's trainable constants and BatchNormalization buffers in place (with new buffers: other
// copies of the graph keep their weights).
Status ResetParameters(Graph& graph, uint64_t seed);

}  // namespace octet::training
