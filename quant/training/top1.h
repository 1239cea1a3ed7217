// Top-1 classification: the class a row of logits picks and how many rows pick their label. Training, `octet qat`,
// `octet demo` and the sensitivity analysis's accuracy metric all count the same way, through these.
#pragma once

#include <cstdint>
#include <span>

#include "core/status.h"
#include "core/tensor.h"

namespace octet::training {

// The index of the first largest value of `row` (std::max_element's choice: ties go to the lower class, and a NaN
// never displaces an earlier value). `row` must not be empty.
int64_t ArgMax(std::span<const float> row);

// The rows of f32 logits [N, C] whose ArgMax equals their label; `labels` has one entry per row (any value: one
// outside [0, C) is simply never right).
Result<int64_t> CountTop1(const Tensor& logits, std::span<const int64_t> labels);

// CountTop1 / N, in [0, 1]; N must be at least 1.
Result<double> Top1Accuracy(const Tensor& logits, std::span<const int64_t> labels);

}  // namespace octet::training
