// NEON dot-product qdwconv kernels. Tile: 16 channels (four q registers of int32 lanes) x up to 8 output pixels, then
// qgemm's NEON epilogue over the 8 x 16 block of accumulators.
// sdot multiplies groups of 4 bytes, so taps are taken 4 at a time (a tap count is padded to a multiple of 4 with
// zero weights, those taps reading tap 0's row) and transposed with two rounds of zip: 16 channels x 4 taps of
// bytes become 4 registers whose 32-bit lane j holds channel 4k + j's four taps, in channel order. The channel
// block's weights are interleaved the same way once per block, on the stack. u8 inputs are flipped to s8
// (x - 128, an eor) and the epilogue adds 128 * sum_t w[t][c] back (its a_offset = -128 and the column sums). A
// channel tail (< 16) is copied into a small buffer, so no input byte past `channels` is read.
#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"
#include "ops/ukernels/qgemm/neon_epilogue.h"

namespace octet {
namespace {

constexpr size_t kPixels = 8;

// v[0..3]: 16 channels of taps 0..3 -> out[k] lane j = (v0, v1, v2, v3) of channel 4k + j.
inline void Interleave(const int8x16_t v[4], int8x16_t out[4]) {
  const int16x8_t a = vreinterpretq_s16_s8(vzip1q_s8(v[0], v[1]));
  const int16x8_t b = vreinterpretq_s16_s8(vzip2q_s8(v[0], v[1]));
  const int16x8_t c = vreinterpretq_s16_s8(vzip1q_s8(v[2], v[3]));
  const int16x8_t d = vreinterpretq_s16_s8(vzip2q_s8(v[2], v[3]));
  out[0] = vreinterpretq_s8_s16(vzip1q_s16(a, c));
  out[1] = vreinterpretq_s8_s16(vzip2q_s16(a, c));
  out[2] = vreinterpretq_s8_s16(vzip1q_s16(b, d));
  out[3] = vreinterpretq_s8_s16(vzip2q_s16(b, d));
}

template <typename TA>
inline int8x16_t LoadInput(const void* row, size_t c0, size_t cols) {
  const auto* src = static_cast<const uint8_t*>(row) + c0;
  uint8x16_t bytes;
  if (cols == 16) {
    bytes = vld1q_u8(src);
  } else {
    uint8_t buffer[16] = {};
    std::memcpy(buffer, src, cols);
    bytes = vld1q_u8(buffer);
  }
  if constexpr (std::is_same_v<TA, uint8_t>) bytes = veorq_u8(bytes, vdupq_n_u8(0x80));
  return vreinterpretq_s8_u8(bytes);
}

template <typename TA, QGemmStage kStage>
void Run(const QDwConvUkernelArgs& a) {
  const QGemmUkernelParams& p = *a.params;
  const size_t cp = QDwConvPaddedChannels(a.channels), taps = a.taps, groups = (taps + 3) / 4;
  const size_t out_size = kStage == QGemmStage::kS32 || kStage == QGemmStage::kF32 ? 4 : 1;
  const int32_t a_offset = std::is_same_v<TA, uint8_t> ? -128 : 0;
  alignas(16) int8_t wq[kQDwConvMaxTaps / 4 * 64];
  alignas(16) int32_t tile[kPixels * 16];
  for (size_t c0 = 0; c0 < a.channels; c0 += 16) {
    const size_t cols = a.channels - c0 < 16 ? a.channels - c0 : 16;
    for (size_t q = 0; q < groups; ++q) {
      int8x16_t v[4], out[4];
      for (size_t j = 0; j < 4; ++j) {
        const size_t t = 4 * q + j;
        if (t < taps) {
          const int16_t* w = a.w + t * cp + c0;  // padded: 16 readable
          v[j] = vcombine_s8(vmovn_s16(vld1q_s16(w)), vmovn_s16(vld1q_s16(w + 8)));
        } else {
          v[j] = vdupq_n_s8(0);
        }
      }
      Interleave(v, out);
      for (size_t k = 0; k < 4; ++k) vst1q_s8(wq + q * 64 + k * 16, out[k]);
    }
    for (size_t px0 = 0; px0 < a.pixels; px0 += kPixels) {
      const size_t rows = a.pixels - px0 < kPixels ? a.pixels - px0 : kPixels;
      for (size_t r = 0; r < rows; ++r) {
        const void* const* in = a.input + (px0 + r) * taps;
        int32x4_t acc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
        for (size_t q = 0; q < groups; ++q) {
          int8x16_t v[4], x[4];
          for (size_t j = 0; j < 4; ++j) {
            const size_t t = 4 * q + j;
            v[j] = LoadInput<TA>(in[t < taps ? t : 0], c0, cols);
          }
          Interleave(v, x);
          for (size_t k = 0; k < 4; ++k) acc[k] = vdotq_s32(acc[k], x[k], vld1q_s8(wq + q * 64 + k * 16));
        }
        for (size_t k = 0; k < 4; ++k) vst1q_s32(tile + r * 16 + k * 4, acc[k]);
      }
      void* y = static_cast<uint8_t*>(a.y) + px0 * a.y_pixel_stride * out_size;
      neon::Epilogue<kStage>(tile, 16, rows, cols, a_offset, p, 0, c0, y, a.y_pixel_stride);
    }
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(neondot, 16)

}  // namespace octet
