// Cross-entropy and MSE losses.
#include "ops/float/grad/loss.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace octet::float_ops {

Result<LossAndGrad> SoftmaxCrossEntropy(const Tensor& logits, std::span<const int64_t> labels) {
  if (logits.dtype() != DType::kF32 || logits.shape().rank() != 2) {
    return InvalidArgument("cross-entropy needs f32 logits [N, C], got {} {}", DTypeName(logits.dtype()),
                           logits.shape());
  }
  const int64_t n = logits.shape().dim(0), c = logits.shape().dim(1);
  if (static_cast<int64_t>(labels.size()) != n) {
    return InvalidArgument("cross-entropy: {} labels for {} rows of logits", labels.size(), n);
  }
  if (n == 0 || c == 0) return InvalidArgument("cross-entropy needs a non-empty batch, got logits {}", logits.shape());
  LossAndGrad out;
  OCTET_ASSIGN_OR_RETURN(out.grad, Tensor::Create(DType::kF32, logits.shape()));
  const float* x = logits.data<float>();
  float* g = out.grad.data<float>();
  std::vector<double> e(static_cast<size_t>(c));
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = labels[static_cast<size_t>(i)];
    if (label < 0 || label >= c) return InvalidArgument("label {} of row {} is outside [0, {})", label, i, c);
    const float* row = x + i * c;
    const double m = *std::max_element(row, row + c);
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j) sum += e[static_cast<size_t>(j)] = std::exp(row[j] - m);
    total += m + std::log(sum) - row[label];
    for (int64_t j = 0; j < c; ++j) {
      const double p = e[static_cast<size_t>(j)] / sum;
      g[i * c + j] = static_cast<float>((p - (j == label ? 1.0 : 0.0)) / static_cast<double>(n));
    }
  }
  out.loss = total / static_cast<double>(n);
  return out;
}

Result<LossAndGrad> MseLoss(const Tensor& input, const Tensor& target) {
  if (input.dtype() != DType::kF32 || target.dtype() != DType::kF32 || input.shape() != target.shape()) {
    return InvalidArgument("MSE loss needs f32 input and target of one shape, got {} and {}", input.shape(),
                           target.shape());
  }
  const int64_t count = input.NumElements();
  if (count == 0) return InvalidArgument("MSE loss of an empty tensor");
  LossAndGrad out;
  OCTET_ASSIGN_OR_RETURN(out.grad, Tensor::Create(DType::kF32, input.shape()));
  const float* x = input.data<float>();
  const float* t = target.data<float>();
  double total = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double diff = static_cast<double>(x[i]) - t[i];
    total += diff * diff;
    out.grad.data<float>()[i] = static_cast<float>(2.0 * diff / static_cast<double>(count));
  }
  out.loss = total / static_cast<double>(count);
  return out;
}

}  // namespace octet::float_ops
