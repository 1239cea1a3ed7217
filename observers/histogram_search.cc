// _non_linear_param_search and _compute_quantization_error in PyTorch 1.13's arithmetic.
#include "observers/histogram_search.h"

#include <limits>
#include <vector>

#include "observers/torch_numerics.h"

namespace octet {
namespace {

float Clamp(float v, float lo, float hi) {
  // torch.clamp(x, min, max) = min(max(x, lo), hi).
  const float a = v < lo ? lo : v;
  return a > hi ? hi : a;
}

// _get_norm(delta_begin, delta_end, density) without the density factor: (e^3 - b^3) / 3 in float32.
float CubeTerm(float b, float e) { return ((e * e) * e - (b * b) * b) / 3.0f; }

}  // namespace

double HistogramQuantizationError(std::span<const float> histogram, float min_val, float max_val, int64_t start_bin,
                                  int64_t end_bin, double dst_nbins) {
  const int64_t bins = static_cast<int64_t>(histogram.size());
  const double bin_width = (static_cast<double>(max_val) - static_cast<double>(min_val)) / static_cast<double>(bins);
  const double dst_bin_width = bin_width * static_cast<double>(end_bin - start_bin + 1) / dst_nbins;
  if (dst_bin_width == 0.0) return 0.0;
  // Python floats meeting float32 tensors are rounded to float32 first.
  const float bw = static_cast<float>(bin_width);
  const float dw = static_cast<float>(dst_bin_width);
  const float half = static_cast<float>(dst_bin_width / 2);
  const float neg_half = static_cast<float>(-dst_bin_width / 2);
  const float last_dst = static_cast<float>(dst_nbins - 1);
  const float middle = CubeTerm(neg_half, half);  // _get_norm(tensor(-w/2), tensor(w/2), .) before the density
  std::vector<float> norm(static_cast<size_t>(bins));
  for (int64_t i = 0; i < bins; ++i) {
    const float begin = static_cast<float>(i - start_bin) * bw;
    const float end = begin + bw;
    const float dst_begin = Clamp(torch_numerics::DivFloor(begin, dw), 0.0f, last_dst);
    const float dst_begin_center = (dst_begin + 0.5f) * dw;
    const float dst_end = Clamp(torch_numerics::DivFloor(end, dw), 0.0f, last_dst);
    const float density = histogram[static_cast<size_t>(i)] / bw;
    float n = 0.0f;
    n = n + density * CubeTerm(begin - dst_begin_center, half);
    n = n + ((dst_end - dst_begin) - 1.0f) * (density * middle);
    const float dst_end_center = dst_end * dw + half;
    n = n + density * CubeTerm(neg_half, end - dst_end_center);
    norm[static_cast<size_t>(i)] = n;
  }
  return static_cast<double>(torch_numerics::Sum(norm));
}

HistogramRange NonLinearParamSearch(std::span<const float> histogram, float min_val, float max_val, double dst_nbins) {
  const int64_t bins = static_cast<int64_t>(histogram.size());
  const float bin_width = (max_val - min_val) / static_cast<float>(bins);
  const double total = static_cast<double>(torch_numerics::Sum(histogram));
  const std::vector<float> csum = torch_numerics::Cumsum(histogram);
  constexpr double kStep = 1e-5;
  double alpha = 0.0;
  double beta = 1.0;
  int64_t start_bin = 0;
  int64_t end_bin = bins - 1;
  double norm_min = std::numeric_limits<double>::infinity();
  while (alpha < beta) {
    const double next_alpha = alpha + kStep;
    const double next_beta = beta - kStep;
    // cSum[l] < next_alpha * total compares float32 tensors with the Python float rounded to float32.
    const float lo_threshold = static_cast<float>(next_alpha * total);
    const float hi_threshold = static_cast<float>(next_beta * total);
    int64_t l = start_bin;
    int64_t r = end_bin;
    while (l < end_bin && csum[static_cast<size_t>(l)] < lo_threshold) ++l;
    while (r > start_bin && csum[static_cast<size_t>(r)] > hi_threshold) --r;
    int64_t next_start = start_bin;
    int64_t next_end = end_bin;
    if ((l - start_bin) > (end_bin - r)) {
      next_start = l;
      alpha = next_alpha;
    } else {
      next_end = r;
      beta = next_beta;
    }
    if (next_start == start_bin && next_end == end_bin) continue;
    const double norm = HistogramQuantizationError(histogram, min_val, max_val, next_start, next_end, dst_nbins);
    if (norm > norm_min) break;
    norm_min = norm;
    start_bin = next_start;
    end_bin = next_end;
  }
  return {min_val + bin_width * static_cast<float>(start_bin), min_val + bin_width * static_cast<float>(end_bin + 1)};
}

}  // namespace octet
