// Stochastic gradient descent with momentum and weight decay, exactly as torch.optim.SGD (PyTorch 1.13,
// foreach=False), per element in float32 with each `a + alpha * b` of PyTorch's add(..., alpha=...) one fused
// multiply-add, as PyTorch's vectorised CPU kernel computes it (bit-identical to PyTorch's results):
//   d = g + weight_decay * p
//   momentum != 0:  buf = d on the first step, else buf = momentum * buf + (1 - dampening) * d
//                   d = nesterov ? d + momentum * buf : buf
//   p = p - lr * d
#pragma once

#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace octet::training {

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

class Sgd {
 public:
  // Fails on a negative lr, momentum or weight decay, or nesterov without momentum or with dampening (PyTorch's
  // checks).
  static Result<Sgd> Create(const SgdOptions& options);

  // One step over `parameters` (updated in place) with their `gradients` (same count and shapes, f32). The
  // parameter list must be the same (count and shapes) at every step: momentum buffers are kept per position.
  Status Step(std::span<Tensor> parameters, std::span<const Tensor> gradients);

  double lr() const { return options_.lr; }
  void set_lr(double lr) { options_.lr = lr; }
  const SgdOptions& options() const { return options_; }

 private:
  explicit Sgd(const SgdOptions& options) : options_(options) {}
  SgdOptions options_;
  std::vector<Tensor> momentum_buffers_;  // empty until the first step
};

}  // namespace octet::training
