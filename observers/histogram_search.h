// HistogramObserver's range search (_non_linear_param_search, a port of caffe2's
// NormMinimization::NonlinearQuantizationParamsSearch; numerics.md §2.7), computed with PyTorch 1.13's float32 and
// double operations in PyTorch's order, so that it picks the same bins.
#pragma once

#include <cstdint>
#include <span>

namespace octet {

// The L2 error of quantizing the histogram into dst_nbins levels over source bins [start_bin, end_bin]
// (_compute_quantization_error): samples uniform inside each source bin, reconstructed at destination-bin centres,
// clipped mass in the end bins. The bin width is taken in double from min_val / max_val as PyTorch's .item() does;
// the per-bin terms are float32 tensor arithmetic and their sum is torch.sum's (torch_numerics::Sum).
double HistogramQuantizationError(std::span<const float> histogram, float min_val, float max_val, int64_t start_bin,
                                  int64_t end_bin, double dst_nbins);

struct HistogramRange {
  float min;
  float max;
};

// Greedy search from the full range: step alpha / beta by 1e-5 over the cumulative histogram, move the start or
// the end bin (whichever quantile moved further), stop at the first increase of the L2 error. Returns
// min_val + bin_width * start_bin and min_val + bin_width * (end_bin + 1), bin_width = (max_val - min_val) / bins
// in float32. dst_nbins = 2^bits of the dtype (256 for quint8 and qint8 even with a reduced or custom range, 2^32
// for qint32), as PyTorch uses.
HistogramRange NonLinearParamSearch(std::span<const float> histogram, float min_val, float max_val, double dst_nbins);

}  // namespace octet
