// The scalar output stage for one int32 accumulator, shared by the scalar qgemm and qdwconv kernels: the
// reference's per-value functions, picked at compile time by the kernel's stage. `c` is the output channel (the
// index into the per-channel parameters), `o` the element offset in y.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/reference/qgemm_reference.h"
#include "ops/reference/requantize_reference.h"
#include "ops/ukernels/qgemm.h"

namespace octet {

template <QGemmStage kStage>
inline void StoreQGemmStageValue(const QGemmStageParams& s, int32_t v, size_t c, void* y, size_t o) {
  int32_t q = 0;
  switch (kStage) {
    case QGemmStage::kS32: static_cast<int32_t*>(y)[o] = v; return;
    case QGemmStage::kF32:
      static_cast<float*>(y)[o] = reference::DequantizeAccumulatorValue(
          v, s.a_scale, s.w_scales[c], s.bias_f32 != nullptr ? s.bias_f32[c] : 0.0f);
      return;
    case QGemmStage::kFp32: q = reference::RequantizeFp32Value(v, s.multipliers[c], s.zero_point, s.lo, s.hi); break;
    case QGemmStage::kQ31:
      q = reference::RequantizeQ31Value(v, s.q31_multipliers[c], s.q31_shifts[c], s.zero_point, s.lo, s.hi);
      break;
    case QGemmStage::kFbgemm:
      q = reference::RequantizeFbgemmValue(v, s.bias_f32 != nullptr ? s.bias_f32[c] : 0.0f, s.multipliers[c],
                                           s.zero_point, s.lo, s.hi);
      break;
  }
  if (s.signed_output) {
    static_cast<int8_t*>(y)[o] = static_cast<int8_t>(q);
  } else {
    static_cast<uint8_t*>(y)[o] = static_cast<uint8_t>(q);
  }
}

}  // namespace octet
