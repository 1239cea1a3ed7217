// PyTorch's observer qparams arithmetic (calculate_qmin_qmax, _calculate_qparams) in float32.
#include "observers/qparams_math.h"

#include <cmath>
#include <limits>

namespace octet {
namespace {

// Python's floor division for the reduce_range halving (-127 // 2 == -64).
int64_t FloorDiv2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

const char* TorchDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kU8: return "quint8";
    case DType::kS8: return "qint8";
    case DType::kS32: return "qint32";
    case DType::kF32: break;
  }
  return "f32";
}

}  // namespace

Result<QuantRange> CalculateQMinQMax(DType dtype, std::optional<int64_t> quant_min, std::optional<int64_t> quant_max,
                                     bool reduce_range, std::string_view what) {
  if (!IsIntegerDType(dtype)) {
    return InvalidArgument("failed to create {}: dtype must be quint8, qint8 or qint32, got {}", what, dtype);
  }
  if (quant_min.has_value() != quant_max.has_value()) {
    return InvalidArgument(
        "failed to create {}: quant_min and quant_max must be given together, got only {} (PyTorch would silently "
        "ignore it)",
        what, quant_min.has_value() ? "quant_min" : "quant_max");
  }
  QuantRange r;
  if (quant_min.has_value()) {
    const int64_t lo = *quant_min;
    const int64_t hi = *quant_max;
    if (!(lo <= 0 && 0 <= hi)) {
      return InvalidArgument("failed to create {}: the quantization range must include 0, got [{}, {}]", what, lo,
                             hi);
    }
    if (!(lo < hi)) {
      return InvalidArgument("failed to create {}: quant_min must be less than quant_max, got [{}, {}]", what, lo,
                             hi);
    }
    const int64_t len = hi - lo + 1;
    if (dtype == DType::kS8 && len > 256) {
      return InvalidArgument("failed to create {}: a qint8 range spans at most 256 values, got [{}, {}] ({} values)",
                             what, lo, hi, len);
    }
    if (dtype == DType::kS32 && len > (int64_t{1} << 31)) {
      return InvalidArgument(
          "failed to create {}: a qint32 range spans at most 2^31 values (PyTorch's limit), got [{}, {}] ({} values)",
          what, lo, hi, len);
    }
    r.quant_min = reduce_range ? FloorDiv2(lo) : lo;
    r.quant_max = reduce_range ? FloorDiv2(hi) : hi;
    r.customized = true;
    if (r.quant_min < DTypeMin(dtype) || r.quant_max > DTypeMax(dtype)) {
      return InvalidArgument("failed to create {}: the range [{}, {}] does not fit {}, whose limits are [{}, {}]",
                             what, r.quant_min, r.quant_max, TorchDTypeName(dtype), DTypeMin(dtype),
                             DTypeMax(dtype));
    }
    if (r.quant_min == r.quant_max) {
      return InvalidArgument("failed to create {}: reduce_range leaves the single value {} of the range [{}, {}]",
                             what, r.quant_min, lo, hi);
    }
    return r;
  }
  switch (dtype) {
    case DType::kS8: r.quant_min = reduce_range ? -64 : -128; r.quant_max = reduce_range ? 63 : 127; break;
    case DType::kU8: r.quant_min = 0; r.quant_max = reduce_range ? 127 : 255; break;
    case DType::kS32: r.quant_min = DTypeMin(DType::kS32); r.quant_max = DTypeMax(DType::kS32); break;
    case DType::kF32: break;
  }
  return r;
}

ScaleZeroPoint CalculateScaleZeroPoint(float min_val, float max_val, const QParamsSpec& spec) {
  const int64_t qmin = spec.range.quant_min;
  const int64_t qmax = spec.range.quant_max;
  const float min_neg = min_val < 0.0f ? min_val : 0.0f;
  const float max_pos = max_val > 0.0f ? max_val : 0.0f;
  ScaleZeroPoint out;
  if (IsSymmetric(spec.qscheme)) {
    const float amax = -min_neg > max_pos ? -min_neg : max_pos;
    // Python computes float(quant_max - quant_min) / 2 in double; the tensor division rounds it to float32.
    const float divisor = static_cast<float>(static_cast<double>(qmax - qmin) / 2.0);
    const float scale = amax / divisor;
    out.scale = scale > spec.eps ? scale : spec.eps;
    out.zero_point = 0;
    if (spec.dtype == DType::kU8) out.zero_point = spec.range.customized ? (qmin + qmax) / 2 : 128;
    return out;
  }
  const float divisor = static_cast<float>(static_cast<double>(qmax - qmin));
  const float scale_raw = (max_pos - min_neg) / divisor;
  const float scale = scale_raw > spec.eps ? scale_raw : spec.eps;
  const float shift = std::nearbyint(min_neg / scale);  // torch.round: half to even, in float32
  int64_t zp = qmin - static_cast<int64_t>(shift);
  zp = zp < qmin ? qmin : (zp > qmax ? qmax : zp);
  out.scale = scale;
  out.zero_point = zp;
  return out;
}

Result<QParams> CalculateQParamsFromRange(std::span<const float> min_val, std::span<const float> max_val,
                                          const QParamsSpec& spec) {
  if (min_val.size() != max_val.size()) {
    return Internal("failed to calculate qparams: {} minimums and {} maximums", min_val.size(), max_val.size());
  }
  const bool per_channel = IsPerChannel(spec.qscheme);
  const bool never_observed =
      min_val.empty() || (!per_channel && min_val.size() == 1 && min_val[0] == std::numeric_limits<float>::infinity() &&
                          max_val[0] == -std::numeric_limits<float>::infinity());
  if (never_observed) {
    // PyTorch warns and returns scale [1.0], zero point [0]. A symmetric quint8 scheme needs its midpoint instead,
    // which is the one zero point such a scheme may have.
    int64_t zp = 0;
    if (IsSymmetric(spec.qscheme) && spec.dtype == DType::kU8) {
      zp = spec.range.customized ? (spec.range.quant_min + spec.range.quant_max) / 2 : 128;
    }
    return QParams::Create(spec.qscheme, spec.dtype, spec.range.quant_min, spec.range.quant_max, {1.0f},
                           {static_cast<int32_t>(zp)}, spec.axis);
  }
  if (!per_channel && min_val.size() != 1) {
    return Internal("failed to calculate qparams: a per-tensor scheme takes one range, got {}", min_val.size());
  }
  std::vector<float> scales(min_val.size());
  std::vector<int32_t> zero_points(min_val.size());
  for (size_t c = 0; c < min_val.size(); ++c) {
    const float lo = min_val[c];
    const float hi = max_val[c];
    if (std::isnan(lo) || std::isnan(hi) || !(lo <= hi)) {
      return InvalidArgument("failed to calculate qparams: min {} should be less than or equal to max {}{}", lo, hi,
                             per_channel ? fmt::format(" (channel {})", c) : std::string());
    }
    if (std::isinf(lo) || std::isinf(hi)) {
      return InvalidArgument("failed to calculate qparams: the range [{}, {}] is not finite{}", lo, hi,
                             per_channel ? fmt::format(" (channel {})", c) : std::string());
    }
    const ScaleZeroPoint sz = CalculateScaleZeroPoint(lo, hi, spec);
    scales[c] = sz.scale;
    zero_points[c] = static_cast<int32_t>(sz.zero_point);
  }
  auto q = QParams::Create(spec.qscheme, spec.dtype, spec.range.quant_min, spec.range.quant_max, std::move(scales),
                           std::move(zero_points), spec.axis);
  if (!q.ok()) return q.status().WithContext("failed to calculate qparams");
  return q;
}

}  // namespace octet
