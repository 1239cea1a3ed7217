// BatchNormalization in training mode (PyTorch's nn.BatchNorm semantics) and its backward.
//
// Training forward over X [N, C, ...]: per channel, mean and biased variance over N and the spatial dims (M
// elements), Y = (X - mean) / sqrt(var + eps) * scale + B; the running statistics move as in PyTorch:
// running = (1 - momentum) * running + momentum * batch, with the unbiased variance (var * M / (M - 1)).
// PyTorch's momentum is 1 - ONNX's `momentum` attribute (the exporter writes 0.9 for nn.BatchNorm2d's 0.1).
//
// Backward, training mode (xhat = (x - mean) * invstd, batch statistics recomputed from X):
//   dB = sum dY, dscale = sum dY * xhat, dX = scale * invstd / M * (M dY - dB - xhat dscale).
// Eval mode (running statistics, Y an affine map of X): dX = dY * scale * invstd, the same dscale and dB with
// xhat = (x - running_mean) * invstd. The running statistics get no gradient. Sums are in double.
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

struct BatchNormTrainingArgs {
  float epsilon = 1e-5f;
  float momentum = 0.1f;  // PyTorch's convention (weight of the new batch statistics)
};

// The training-mode forward: returns Y and updates running_mean / running_var (shape [C]) in place. Fails on a
// batch with fewer than two values per channel (PyTorch's "Expected more than 1 value per channel").
Result<Tensor> BatchNormTrainingForward(const Tensor& x, const Tensor& scale, const Tensor& bias,
                                        Tensor& running_mean, Tensor& running_var, const BatchNormTrainingArgs& args);

// PyTorch's momentum for a BatchNormalization node (1 - the ONNX attribute, default 0.9) and its epsilon.
Result<BatchNormTrainingArgs> ReadBatchNormTrainingArgs(const Node& node);

Status RegisterBatchNormBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
