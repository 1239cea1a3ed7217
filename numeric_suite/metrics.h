// Error metrics of the numeric suite: float reference x against an approximation y (dequantized int8 results).
#pragma once

#include "core/status.h"
#include "core/tensor.h"

namespace octet {

// All metrics take two f32 tensors of the same shape, treat them as flat vectors and accumulate in double (as
// torch.ao.ns.fx.utils does after dequantizing). A shape or dtype mismatch is an InvalidArgument naming both.

// Signal-to-quantization-noise ratio in dB: 20 log10(||x||_2 / ||x - y||_2) (PyTorch's compute_sqnr).
// +inf when x == y exactly (also for two all-zero tensors); -inf when ||x|| == 0 but y differs.
Result<double> Sqnr(const Tensor& x, const Tensor& y);

// sqrt(sum (x - y)^2 / sum x^2) (PyTorch's compute_normalized_l2_error). 0 when x == y; +inf when x is all zero
// and y is not.
Result<double> NormalizedL2(const Tensor& x, const Tensor& y);

// <x, y> / (||x|| ||y||) on the flattened tensors (PyTorch's compute_cosine_similarity). 1 when both are all zero,
// 0 when exactly one is (there is no direction to compare).
Result<double> CosineSimilarity(const Tensor& x, const Tensor& y);

// max |x - y| / scale: the worst error in units of the quantization step `scale` (> 0 and finite). 0 for empty
// tensors.
Result<double> MaxAbsErrorLsb(const Tensor& x, const Tensor& y, double scale);

// The sums the metrics above are made of, for loggers that keep running totals instead of tensors
// (RunningSqnrLogger). Accumulate() adds one pair of tensors; the getters give the metrics over everything added.
struct ErrorSums {
  double sum_x2 = 0;    // sum x^2
  double sum_y2 = 0;    // sum y^2
  double sum_xy = 0;    // sum x y
  double sum_err2 = 0;  // sum (x - y)^2
  double max_abs_err = 0;
  int64_t count = 0;

  Status Accumulate(const Tensor& x, const Tensor& y);
  double Sqnr() const;
  double NormalizedL2() const;
  double CosineSimilarity() const;
};

}  // namespace octet
