// AVX-512 VNNI qdwconv kernels. Tile: 16 channels (one zmm of int32 lanes) x up to 8 output pixels, then qgemm's
// AVX-512 epilogue over the 8 x 16 block of accumulators.
// Each int32 lane holds one channel: the input byte widened to 32 bits (zero- or sign-extended) and the weight as a
// zero-extended int16, so vpdpwssd's pairwise product x_lo * w_lo + x_hi * 0 is exactly x * w (the high half of a
// sign-extended negative input meets a 0 weight half). The channel block's weights are widened once into a stack
// buffer (taps <= kQDwConvMaxTaps) and reused by every pixel. Channel tails load with a byte mask, so no input byte
// past `channels` is read. Registers: two accumulator chains per pixel (vpdpwssd latency), the rest streamed.
#include <immintrin.h>

#include <type_traits>

#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"
#include "ops/ukernels/qgemm/avx512_epilogue.h"

namespace octet {
namespace {

constexpr size_t kPixels = 8;

template <typename TA>
inline __m512i LoadInput(const void* row, size_t c0, __mmask16 mask) {
  const __m128i bytes = _mm_maskz_loadu_epi8(mask, static_cast<const uint8_t*>(row) + c0);
  if constexpr (std::is_same_v<TA, uint8_t>) {
    return _mm512_cvtepu8_epi32(bytes);
  } else {
    return _mm512_cvtepi8_epi32(bytes);
  }
}

template <typename TA, QGemmStage kStage>
void Run(const QDwConvUkernelArgs& a) {
  const QGemmUkernelParams& p = *a.params;
  const size_t cp = QDwConvPaddedChannels(a.channels), taps = a.taps;
  const size_t out_size = kStage == QGemmStage::kS32 || kStage == QGemmStage::kF32 ? 4 : 1;
  alignas(64) int32_t wide[kQDwConvMaxTaps * 16];
  alignas(64) int32_t tile[kPixels * 16];
  for (size_t c0 = 0; c0 < a.channels; c0 += 16) {
    const size_t cols = a.channels - c0 < 16 ? a.channels - c0 : 16;
    const __mmask16 mask = avx512::TailMask(cols);
    for (size_t t = 0; t < taps; ++t) {
      const __m256i w16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.w + t * cp + c0));
      _mm512_store_si512(wide + t * 16, _mm512_cvtepu16_epi32(w16));
    }
    for (size_t px0 = 0; px0 < a.pixels; px0 += kPixels) {
      const size_t rows = a.pixels - px0 < kPixels ? a.pixels - px0 : kPixels;
      for (size_t r = 0; r < rows; ++r) {
        const void* const* in = a.input + (px0 + r) * taps;
        __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
        size_t t = 0;
        for (; t + 2 <= taps; t += 2) {
          acc0 = _mm512_dpwssd_epi32(acc0, LoadInput<TA>(in[t], c0, mask), _mm512_load_si512(wide + t * 16));
          acc1 = _mm512_dpwssd_epi32(acc1, LoadInput<TA>(in[t + 1], c0, mask), _mm512_load_si512(wide + t * 16 + 16));
        }
        if (t < taps) acc0 = _mm512_dpwssd_epi32(acc0, LoadInput<TA>(in[t], c0, mask), _mm512_load_si512(wide + t * 16));
        _mm512_store_si512(tile + r * 16, _mm512_add_epi32(acc0, acc1));
      }
      void* y = static_cast<uint8_t*>(a.y) + px0 * a.y_pixel_stride * out_size;
      avx512::Epilogue<kStage>(tile, 16, rows, cols, 0, p, 0, c0, y, a.y_pixel_stride);
    }
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(avx512vnni, 16)

}  // namespace octet
