// Scalar qdwconv kernels and the weight packer: the portable fallback (one channel at a time, accumulation mod 2^32
// in uint32_t as the SIMD kernels wrap) and the one definition of the packed layout (ops/ukernels/qdwconv.h). The
// stages call the reference's per-value functions.
#include <cstring>

#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"
#include "ops/ukernels/qgemm/scalar_epilogue.h"

namespace octet {

void QDwConvPackWeights(size_t channels, size_t taps, const int8_t* w, int16_t* packed) {
  const size_t cp = QDwConvPaddedChannels(channels);
  std::memset(packed, 0, taps * cp * sizeof(int16_t));
  for (size_t c = 0; c < channels; ++c) {
    for (size_t t = 0; t < taps; ++t) packed[t * cp + c] = w[c * taps + t];
  }
}

void QDwConvPackWeightsQuads(size_t channels, size_t taps, const int8_t* w, int8_t* packed) {
  const size_t quads = (taps + 3) / 4;
  for (size_t b = 0; b < QDwConvQuadBlocks(channels); ++b) {
    for (size_t q = 0; q < quads; ++q) {
      int8_t* out = packed + (b * quads + q) * 128;
      for (size_t v = 0; v < 4; ++v) {
        for (size_t d = 0; d < 8; ++d) {
          const size_t c = 32 * b + 4 * v + d % 4 + 16 * (d / 4);
          for (size_t k = 0; k < 4; ++k) {
            const size_t t = 4 * q + k;
            out[v * 32 + d * 4 + k] = t < taps ? w[c * taps + t] : int8_t{0};
          }
        }
      }
    }
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
      StoreQGemmStageValue<kStage>(s, v, c, args.y, o);
    }
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(scalar, 1)

}  // namespace octet
