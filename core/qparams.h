// QParams: how integers map to real numbers (scale, zero point, range, per-tensor or per-channel), and QTensor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

// PyTorch's qscheme names.
enum class QScheme : uint8_t { kPerTensorAffine, kPerTensorSymmetric, kPerChannelAffine, kPerChannelSymmetric };

// "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric".
const char* QSchemeName(QScheme scheme);
Result<QScheme> ParseQScheme(std::string_view name);
bool IsPerChannel(QScheme scheme);
bool IsSymmetric(QScheme scheme);

// real = scale * (q - zero_point), q in [quant_min, quant_max] (a sub-range of the dtype's limits, e.g. 4-bit).
// A valid QParams (only Create builds one) has: an integer dtype; dtype min <= quant_min < quant_max <= dtype max;
// every scale finite and > 0; every zero point inside [quant_min, quant_max] so that real 0 is exactly
// representable; one scale and zero point per-tensor, or equally many (>= 1) per channel with axis >= 0;
// symmetric schemes with zero point 0 for signed dtypes and the range midpoint for unsigned ones (PyTorch's
// quint8 symmetric gives 128 for [0,255], (qmin+qmax)//2 for a custom range).
class QParams {
 public:
  QParams() = default;

  static Result<QParams> Create(QScheme scheme, DType dtype, int64_t quant_min, int64_t quant_max,
                                std::vector<float> scales, std::vector<int32_t> zero_points, int axis = 0);
  // Per-tensor affine over the dtype's full range.
  static Result<QParams> PerTensor(DType dtype, float scale, int32_t zero_point);
  static Result<QParams> PerTensor(DType dtype, float scale, int32_t zero_point, int64_t quant_min,
                                   int64_t quant_max);
  // Per-channel affine (axis `axis`) over [quant_min, quant_max].
  static Result<QParams> PerChannel(DType dtype, std::vector<float> scales, std::vector<int32_t> zero_points,
                                    int axis, int64_t quant_min, int64_t quant_max);

  QScheme scheme() const { return scheme_; }
  DType dtype() const { return dtype_; }
  int32_t quant_min() const { return quant_min_; }
  int32_t quant_max() const { return quant_max_; }
  bool per_channel() const { return IsPerChannel(scheme_); }
  int axis() const { return axis_; }
  int64_t num_channels() const { return static_cast<int64_t>(scales_.size()); }
  const std::vector<float>& scales() const { return scales_; }
  const std::vector<int32_t>& zero_points() const { return zero_points_; }
  // Per-tensor accessors (channel 0 for per-channel).
  float scale() const { return scales_.front(); }
  int32_t zero_point() const { return zero_points_.front(); }

  // Checks that these qparams can describe a tensor of `shape`: per-channel needs axis < rank and
  // shape[axis] == num_channels. `what` names the tensor in the message.
  Status ValidateFor(const Shape& shape, std::string_view what) const;
  std::string ToString() const;

 private:
  QScheme scheme_ = QScheme::kPerTensorAffine;
  DType dtype_ = DType::kU8;
  int32_t quant_min_ = 0;
  int32_t quant_max_ = 255;
  int axis_ = 0;
  std::vector<float> scales_{1.0f};
  std::vector<int32_t> zero_points_{0};
};

// An integer tensor and the qparams that give it meaning.
class QTensor {
 public:
  QTensor() = default;
  // Fails when the tensor's dtype differs from the qparams' or the qparams do not fit its shape.
  static Result<QTensor> Create(Tensor values, QParams qparams);

  const Tensor& values() const { return values_; }
  Tensor& values() { return values_; }
  const QParams& qparams() const { return qparams_; }
  const Shape& shape() const { return values_.shape(); }

 private:
  Tensor values_;
  QParams qparams_;
};

}  // namespace octet
