// Top-1 classification over logits.
#include "quant/training/top1.h"

namespace octet::training {

int64_t ArgMax(std::span<const float> row) {
  size_t best = 0;
  for (size_t j = 1; j < row.size(); ++j) best = row[best] < row[j] ? j : best;
  return static_cast<int64_t>(best);
}

Result<int64_t> CountTop1(const Tensor& logits, std::span<const int64_t> labels) {
  if (logits.dtype() != DType::kF32 || logits.shape().rank() != 2 || logits.shape().dim(1) < 1 ||
      logits.shape().dim(0) != static_cast<int64_t>(labels.size())) {
    return InvalidArgument("logits must be f32 [{}, C] with C >= 1 (one row per label), got {} {}", labels.size(),
                           DTypeName(logits.dtype()), logits.shape());
  }
  const int64_t n = logits.shape().dim(0), c = logits.shape().dim(1);
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::span<const float> row(logits.data<float>() + i * c, static_cast<size_t>(c));
    correct += ArgMax(row) == labels[static_cast<size_t>(i)] ? 1 : 0;
  }
  return correct;
}

Result<double> Top1Accuracy(const Tensor& logits, std::span<const int64_t> labels) {
  if (labels.empty()) return InvalidArgument("top-1 accuracy of no samples");
  OCTET_ASSIGN_OR_RETURN(const int64_t correct, CountTop1(logits, labels));
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

}  // namespace octet::training
