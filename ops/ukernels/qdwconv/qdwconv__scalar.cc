// Scalar qdwconv kernels and the weight packer: the portable fallback (one channel at a time, accumulation mod 2^32
// in uint32_t as the SIMD kernels wrap) and the one definition of the packed layout (ops/ukernels/qdwconv.h). The
// stages call the reference's per-value functions.
#include <cstring>

#include "ops/reference/qgemm_reference.h"
#include "ops/reference/requantize_reference.h"
#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"

namespace octet {

void QDwConvPackWeights(size_t channels, size_t taps, const int8_t* w, int16_t* packed) {
  const size_t cp = QDwConvPaddedChannels(channels);
  std::memset(packed, 0, taps * cp * sizeof(int16_t));
  for (size_t c = 0; c < channels; ++c) {
    for (size_t t = 0; t < taps; ++t) packed[t * cp + c] = w[c * taps + t];
  }
}

namespace {

template <typename TA, QGemmStage kStage>
void Run(const QDwConvUkernelArgs& args) {
  const QGemmUkernelParams& p = *args.params;
  const QGemmStageParams& s = p.stage;
  OCTET_DCHECK(s.stage == kStage);
  const size_t cp = QDwConvPaddedChannels(args.channels);
  for (size_t px = 0; px < args.pixels; ++px) {
    const void* const* in = args.input + px * args.taps;
    for (size_t c = 0; c < args.channels; ++c) {
      uint32_t acc = static_cast<uint32_t>(p.col_offsets[c]);
      for (size_t t = 0; t < args.taps; ++t) {
        acc += static_cast<uint32_t>(int32_t{static_cast<const TA*>(in[t])[c]} * args.w[t * cp + c]);
      }
      const int32_t v = static_cast<int32_t>(acc);
      const size_t o = px * args.y_pixel_stride + c;
      int32_t q = 0;
      switch (kStage) {
        case QGemmStage::kS32: static_cast<int32_t*>(args.y)[o] = v; continue;
        case QGemmStage::kF32:
          static_cast<float*>(args.y)[o] = reference::DequantizeAccumulatorValue(
              v, s.a_scale, s.w_scales[c], s.bias_f32 != nullptr ? s.bias_f32[c] : 0.0f);
          continue;
        case QGemmStage::kFp32:
          q = reference::RequantizeFp32Value(v, s.multipliers[c], s.zero_point, s.lo, s.hi);
          break;
        case QGemmStage::kQ31:
          q = reference::RequantizeQ31Value(v, s.q31_multipliers[c], s.q31_shifts[c], s.zero_point, s.lo, s.hi);
          break;
        case QGemmStage::kFbgemm:
          q = reference::RequantizeFbgemmValue(v, s.bias_f32 != nullptr ? s.bias_f32[c] : 0.0f, s.multipliers[c],
                                               s.zero_point, s.lo, s.hi);
          break;
      }
      if (s.signed_output) {
        static_cast<int8_t*>(args.y)[o] = static_cast<int8_t>(q);
      } else {
        static_cast<uint8_t*>(args.y)[o] = static_cast<uint8_t>(q);
      }
    }
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(scalar, 1)

}  // namespace octet
