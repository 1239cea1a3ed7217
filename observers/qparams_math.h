// The qparams arithmetic of PyTorch's observers: the effective quant range (calculate_qmin_qmax) and
// scale / zero point from a range (_calculate_qparams), in float32 exactly as PyTorch 1.13 computes them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/dtype.h"
#include "core/qparams.h"
#include "core/status.h"

namespace octet {

// [quant_min, quant_max] after numerics.md §2.2, and whether the caller gave the range ("customized": it decides
// the quint8 symmetric zero point).
struct QuantRange {
  int64_t quant_min = 0;
  int64_t quant_max = 255;
  bool customized = false;
  bool operator==(const QuantRange&) const = default;
};

// calculate_qmin_qmax (torch/ao/quantization/utils.py, numerics.md §2.2):
//   both bounds given: need quant_min <= 0 <= quant_max and quant_min < quant_max; qint8 ranges span at most
//     256 values, qint32 at most 2^31; reduce_range halves both with Python floor division (-127 -> -64);
//   none given: qint8 (-128, 127) or (-64, 63), quint8 (0, 255) or (0, 127), qint32 (-2^31, 2^31 - 1) (reduce_range
//     is ignored for qint32, as in PyTorch).
// octet also rejects what PyTorch accepts silently: only one bound given (PyTorch ignores it), and a customized range
// outside the dtype's limits (PyTorch accepts quint8 [0, 1000] and fails later), both with a message naming the
// option. `what` names the observer in messages.
Result<QuantRange> CalculateQMinQMax(DType dtype, std::optional<int64_t> quant_min, std::optional<int64_t> quant_max,
                                     bool reduce_range, std::string_view what = "observer");

// What _calculate_qparams needs besides the range.
struct QParamsSpec {
  QScheme qscheme = QScheme::kPerTensorAffine;
  DType dtype = DType::kU8;
  QuantRange range;
  float eps = 1.1920928955078125e-07f;  // torch.finfo(torch.float32).eps
  int axis = 0;                          // per-channel schemes only
};

// One channel of _calculate_qparams (UniformQuantizationObserverBase), float32 throughout (numerics.md §2.3):
//   min_neg = min(min_val, 0), max_pos = max(max_val, 0)
//   symmetric: scale = max(max(-min_neg, max_pos) / f32((quant_max - quant_min) / 2), eps);
//              zero_point = 0, or for quint8 (quant_min + quant_max) // 2 with a customized range, else 128
//   affine:    scale = max((max_pos - min_neg) / f32(quant_max - quant_min), eps);
//              zero_point = clamp(quant_min - int(rne(min_neg / scale)), quant_min, quant_max)
// Preconditions: min_val <= max_val, both finite. The zero point is computed in int64: where PyTorch's int32
// conversion overflows (qint32 ranges with one-sided data) octet gives the mathematically intended zero point.
struct ScaleZeroPoint {
  float scale = 1.0f;
  int64_t zero_point = 0;
};
ScaleZeroPoint CalculateScaleZeroPoint(float min_val, float max_val, const QParamsSpec& spec);

// _calculate_qparams over one range (per-tensor) or one per channel, as validated QParams. Before any observation
// (per-tensor min = +inf and max = -inf, or per-channel empty lists) PyTorch returns scale [1.0], zero point [0]; so
// does this. Fails with a clear message when min > max or a bound is NaN (PyTorch asserts), or when the result is
// not a valid QParams (an infinite scale from a range wider than FLT_MAX, or an eps whose reciprocal overflows).
Result<QParams> CalculateQParamsFromRange(std::span<const float> min_val, std::span<const float> max_val,
                                          const QParamsSpec& spec);

}  // namespace octet
