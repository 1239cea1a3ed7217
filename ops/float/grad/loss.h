// Training losses with their gradients, as PyTorch's with reduction "mean".
#pragma once

#include <cstdint>
#include <span>

#include "core/status.h"
#include "core/tensor.h"

namespace octet::float_ops {

struct LossAndGrad {
  double loss = 0.0;
  Tensor grad;  // dL/d(input), the input's shape
};

// nn.CrossEntropyLoss on logits [N, C] (softmax and negative log-likelihood fused, log-sum-exp with the row maximum
// subtracted, in double): L = mean_n(logsumexp(x_n) - x_n[label_n]); dL/dx_n = (softmax(x_n) - onehot(label_n)) / N.
// Fails naming the first label outside [0, C).
Result<LossAndGrad> SoftmaxCrossEntropy(const Tensor& logits, std::span<const int64_t> labels);

// nn.MSELoss: L = mean((x - target)^2); dL/dx = 2 (x - target) / numel. Shapes must be equal.
Result<LossAndGrad> MseLoss(const Tensor& input, const Tensor& target);

}  // namespace octet::float_ops
