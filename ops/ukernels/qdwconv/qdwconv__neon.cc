// NEON qdwconv kernels. Tile: 8 channels (two q registers of int32 lanes) x up to 8 output pixels, then qgemm's NEON
// epilogue over the 8 x 8 block of accumulators.
// Input bytes are widened to int16 (u8 fits: 0..255), weights are int16 already (packed), and smlal / smlal2
// multiply-accumulate into int32 exactly. A channel tail (< 8) is copied into a small buffer, so no input byte past
// `channels` is read.
#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"
#include "ops/ukernels/qgemm/neon_epilogue.h"

namespace octet {
namespace {

constexpr size_t kPixels = 8;

template <typename TA>
inline int16x8_t LoadInput(const void* row, size_t c0, size_t cols) {
  const auto* src = static_cast<const uint8_t*>(row) + c0;
  uint8x8_t bytes;
  if (cols == 8) {
    bytes = vld1_u8(src);
  } else {
    uint8_t buffer[8] = {};
    std::memcpy(buffer, src, cols);
    bytes = vld1_u8(buffer);
  }
  if constexpr (std::is_same_v<TA, uint8_t>) {
    return vreinterpretq_s16_u16(vmovl_u8(bytes));
  } else {
    return vmovl_s8(vreinterpret_s8_u8(bytes));
  }
}

template <typename TA, QGemmStage kStage>
void Run(const QDwConvUkernelArgs& a) {
  const QGemmUkernelParams& p = *a.params;
  const size_t cp = QDwConvPaddedChannels(a.channels), taps = a.taps;
  const size_t out_size = kStage == QGemmStage::kS32 || kStage == QGemmStage::kF32 ? 4 : 1;
  alignas(16) int32_t tile[kPixels * 8];
  for (size_t c0 = 0; c0 < a.channels; c0 += 8) {
    const size_t cols = a.channels - c0 < 8 ? a.channels - c0 : 8;
    for (size_t px0 = 0; px0 < a.pixels; px0 += kPixels) {
      const size_t rows = a.pixels - px0 < kPixels ? a.pixels - px0 : kPixels;
      for (size_t r = 0; r < rows; ++r) {
        const void* const* in = a.input + (px0 + r) * taps;
        int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
        for (size_t t = 0; t < taps; ++t) {
          const int16x8_t x = LoadInput<TA>(in[t], c0, cols);
          const int16x8_t w = vld1q_s16(a.w + t * cp + c0);
          lo = vmlal_s16(lo, vget_low_s16(x), vget_low_s16(w));
          hi = vmlal_high_s16(hi, x, w);
        }
        vst1q_s32(tile + r * 8, lo);
        vst1q_s32(tile + r * 8 + 4, hi);
      }
      void* y = static_cast<uint8_t*>(a.y) + px0 * a.y_pixel_stride * out_size;
      neon::Epilogue<kStage>(tile, 8, rows, cols, 0, p, 0, c0, y, a.y_pixel_stride);
    }
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(neon, 8)

}  // namespace octet
