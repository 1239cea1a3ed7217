// torch.optim.SGD.
#include "quant/training/sgd.h"

#include <cmath>

namespace octet::training {

Result<Sgd> Sgd::Create(const SgdOptions& o) {
  if (!(o.lr >= 0.0)) return InvalidArgument("SGD learning rate must be >= 0, got {}", o.lr);
  if (!(o.momentum >= 0.0)) return InvalidArgument("SGD momentum must be >= 0, got {}", o.momentum);
  if (!(o.weight_decay >= 0.0)) return InvalidArgument("SGD weight decay must be >= 0, got {}", o.weight_decay);
  if (o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0)) {
    return InvalidArgument("Nesterov momentum requires a momentum and zero dampening");
  }
  return Sgd(o);
}

Status Sgd::Step(std::span<Tensor> parameters, std::span<const Tensor> gradients) {
  if (parameters.size() != gradients.size()) {
    return InvalidArgument("SGD step: {} parameters and {} gradients", parameters.size(), gradients.size());
  }
  const bool first = momentum_buffers_.empty();
  if (!first && momentum_buffers_.size() != parameters.size()) {
    return InvalidArgument("SGD step: {} parameters, {} at the previous step", parameters.size(),
                           momentum_buffers_.size());
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].shape() != gradients[i].shape() || parameters[i].dtype() != DType::kF32 ||
        gradients[i].dtype() != DType::kF32) {
      return InvalidArgument("SGD step: parameter {} is {}, its gradient {}", i, parameters[i].shape(),
                             gradients[i].shape());
    }
    if (!first && options_.momentum != 0.0 && momentum_buffers_[i].shape() != parameters[i].shape()) {
      return InvalidArgument("SGD step: parameter {} changed shape to {}", i, parameters[i].shape());
    }
  }
  // Float32 coefficients, as PyTorch passes Python floats to float tensors' kernels.
  const float lr = static_cast<float>(options_.lr), wd = static_cast<float>(options_.weight_decay);
  const float momentum = static_cast<float>(options_.momentum);
  const float keep = static_cast<float>(1.0 - options_.dampening);
  for (size_t i = 0; i < parameters.size(); ++i) {
    float* p = parameters[i].data<float>();
    const float* g = gradients[i].data<float>();
    const int64_t n = parameters[i].NumElements();
    float* buf = nullptr;
    if (options_.momentum != 0.0) {
      if (first) {
        OCTET_ASSIGN_OR_RETURN(Tensor b, Tensor::Create(DType::kF32, parameters[i].shape()));
        momentum_buffers_.push_back(std::move(b));
      }
      buf = momentum_buffers_[i].data<float>();
    }
    for (int64_t e = 0; e < n; ++e) {
      float d = wd != 0.0f ? std::fma(wd, p[e], g[e]) : g[e];
      if (buf != nullptr) {
        buf[e] = first ? d : std::fma(keep, d, momentum * buf[e]);
        d = options_.nesterov ? std::fma(momentum, buf[e], d) : buf[e];
      }
      p[e] = std::fma(-lr, d, p[e]);
    }
  }
  if (first && options_.momentum == 0.0) {
    // No buffers, but remember the parameter count so later steps are checked the same way.
    for (size_t i = 0; i < parameters.size(); ++i) momentum_buffers_.push_back(Tensor());
  }
  return OkStatus();
}

}  // namespace octet::training
