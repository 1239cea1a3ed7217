// QParams validation.
#include "core/qparams.h"

#include <cmath>

#include <fmt/ranges.h>

namespace octet {

const char* QSchemeName(QScheme scheme) {
  switch (scheme) {
    case QScheme::kPerTensorAffine: return "per_tensor_affine";
    case QScheme::kPerTensorSymmetric: return "per_tensor_symmetric";
    case QScheme::kPerChannelAffine: return "per_channel_affine";
    case QScheme::kPerChannelSymmetric: return "per_channel_symmetric";
  }
  return "?";
}

Result<QScheme> ParseQScheme(std::string_view name) {
  for (QScheme s : {QScheme::kPerTensorAffine, QScheme::kPerTensorSymmetric, QScheme::kPerChannelAffine,
                    QScheme::kPerChannelSymmetric}) {
    if (name == QSchemeName(s)) return s;
  }
  return InvalidArgument(
      "failed to parse qscheme '{}': expected per_tensor_affine, per_tensor_symmetric, per_channel_affine or "
      "per_channel_symmetric",
      name);
}

bool IsPerChannel(QScheme scheme) {
  return scheme == QScheme::kPerChannelAffine || scheme == QScheme::kPerChannelSymmetric;
}

bool IsSymmetric(QScheme scheme) {
  return scheme == QScheme::kPerTensorSymmetric || scheme == QScheme::kPerChannelSymmetric;
}

Result<QParams> QParams::Create(QScheme scheme, DType dtype, int64_t quant_min, int64_t quant_max,
                                std::vector<float> scales, std::vector<int32_t> zero_points, int axis) {
  const char* what = QSchemeName(scheme);
  if (!IsIntegerDType(dtype)) {
    return InvalidArgument("failed to create {} qparams: dtype must be u8, s8 or s32, got {}", what, dtype);
  }
  if (quant_min < DTypeMin(dtype) || quant_max > DTypeMax(dtype) || quant_min >= quant_max) {
    return InvalidArgument(
        "failed to create {} qparams: need {} <= quant_min < quant_max <= {} for {}, got quant_min {} and "
        "quant_max {}",
        what, DTypeMin(dtype), DTypeMax(dtype), dtype, quant_min, quant_max);
  }
  if (scales.empty() || scales.size() != zero_points.size()) {
    return InvalidArgument("failed to create {} qparams: need as many zero points as scales (>= 1), got {} and {}",
                           what, scales.size(), zero_points.size());
  }
  if (!IsPerChannel(scheme) && scales.size() != 1) {
    return InvalidArgument("failed to create {} qparams: a per-tensor scheme takes one scale, got {}", what,
                           scales.size());
  }
  if (IsPerChannel(scheme) && axis < 0) {
    return InvalidArgument("failed to create {} qparams: axis must be >= 0, got {}", what, axis);
  }
  for (size_t c = 0; c < scales.size(); ++c) {
    if (!(std::isfinite(scales[c]) && scales[c] > 0.0f)) {
      return InvalidArgument("failed to create {} qparams: scale must be finite and > 0, got {} (channel {})", what,
                             scales[c], c);
    }
    // 1/scale must be finite too, or quantize would multiply by infinity.
    if (!std::isfinite(1.0f / scales[c])) {
      return InvalidArgument("failed to create {} qparams: scale {} is too small, 1/scale overflows (channel {})",
                             what, scales[c], c);
    }
    const int64_t zp = zero_points[c];
    if (zp < quant_min || zp > quant_max) {
      return InvalidArgument(
          "failed to create {} qparams: zero point must lie in [quant_min, quant_max] = [{}, {}] so that 0 is "
          "representable, got {} (channel {})",
          what, quant_min, quant_max, zp, c);
    }
    if (IsSymmetric(scheme)) {
      const bool is_signed = DTypeMin(dtype) < 0;
      const bool ok = is_signed ? zp == 0 : (zp == (quant_min + quant_max) / 2 || zp == (quant_min + quant_max + 1) / 2);
      if (!ok) {
        return InvalidArgument(
            "failed to create {} qparams: a symmetric scheme needs zero point {} for {} over [{}, {}], got {} "
            "(channel {})",
            what, is_signed ? 0 : (quant_min + quant_max + 1) / 2, dtype, quant_min, quant_max, zp, c);
      }
    }
  }
  QParams q;
  q.scheme_ = scheme;
  q.dtype_ = dtype;
  q.quant_min_ = static_cast<int32_t>(quant_min);
  q.quant_max_ = static_cast<int32_t>(quant_max);
  q.axis_ = IsPerChannel(scheme) ? axis : 0;
  q.scales_ = std::move(scales);
  q.zero_points_ = std::move(zero_points);
  return q;
}

Result<QParams> QParams::PerTensor(DType dtype, float scale, int32_t zero_point) {
  if (!IsIntegerDType(dtype)) {
    return InvalidArgument("failed to create per_tensor_affine qparams: dtype must be u8, s8 or s32, got {}", dtype);
  }
  return PerTensor(dtype, scale, zero_point, DTypeMin(dtype), DTypeMax(dtype));
}

Result<QParams> QParams::PerTensor(DType dtype, float scale, int32_t zero_point, int64_t quant_min,
                                   int64_t quant_max) {
  return Create(QScheme::kPerTensorAffine, dtype, quant_min, quant_max, {scale}, {zero_point});
}

Result<QParams> QParams::PerChannel(DType dtype, std::vector<float> scales, std::vector<int32_t> zero_points,
                                    int axis, int64_t quant_min, int64_t quant_max) {
  return Create(QScheme::kPerChannelAffine, dtype, quant_min, quant_max, std::move(scales),
                std::move(zero_points), axis);
}

Status QParams::ValidateFor(const Shape& shape, std::string_view what) const {
  if (!per_channel()) return OkStatus();
  if (axis_ >= shape.rank()) {
    return InvalidArgument("failed to apply per-channel qparams to '{}' of shape {}: axis {} is not below rank {}",
                           what, shape, axis_, shape.rank());
  }
  if (shape.dim(axis_) != num_channels()) {
    return InvalidArgument(
        "failed to apply per-channel qparams to '{}' of shape {}: {} channels given, dimension {} has {}", what,
        shape, num_channels(), axis_, shape.dim(axis_));
  }
  return OkStatus();
}

std::string QParams::ToString() const {
  if (per_channel()) {
    return fmt::format("{} {} [{}, {}] axis {} scales [{}] zero_points [{}]", QSchemeName(scheme_), dtype_,
                       quant_min_, quant_max_, axis_, fmt::join(scales_, ", "), fmt::join(zero_points_, ", "));
  }
  return fmt::format("{} {} [{}, {}] scale {} zero_point {}", QSchemeName(scheme_), dtype_, quant_min_, quant_max_,
                     scale(), zero_point());
}

Result<QTensor> QTensor::Create(Tensor values, QParams qparams) {
  if (values.dtype() != qparams.dtype()) {
    return InvalidArgument("failed to create quantized tensor: values are {} but qparams are for {}",
                           values.dtype(), qparams.dtype());
  }
  OCTET_RETURN_IF_ERROR(qparams.ValidateFor(values.shape(), "tensor"));
  QTensor q;
  q.values_ = std::move(values);
  q.qparams_ = std::move(qparams);
  return q;
}

}  // namespace octet
