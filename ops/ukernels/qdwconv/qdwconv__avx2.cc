// AVX2 qdwconv kernels. Tile: 8 channels (one ymm of int32 lanes) x up to 8 output pixels, then qgemm's AVX2
// epilogue over the 8 x 8 block of accumulators.
// Each int32 lane holds one channel: the input byte widened to 32 bits (zero- or sign-extended) and the weight as a
// zero-extended int16, so vpmaddwd's x_lo * w_lo + x_hi * 0 is exactly x * w (exact: no int16 saturation, unlike
// vpmaddubsw). The channel block's weights are widened once into a stack buffer (taps <= kQDwConvMaxTaps). A
// channel tail (< 8) is copied into a small buffer, so no input byte past `channels` is read.
#include <immintrin.h>

#include <type_traits>

#include <cstring>

#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"
#include "ops/ukernels/qgemm/avx2_epilogue.h"

namespace octet {
namespace {

constexpr size_t kPixels = 8;

template <typename TA>
inline __m256i LoadInput(const void* row, size_t c0, size_t cols) {
  const auto* src = static_cast<const uint8_t*>(row) + c0;
  __m128i bytes;
  if (cols == 8) {
    bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
  } else {
    uint64_t buffer = 0;
    std::memcpy(&buffer, src, cols);
    bytes = _mm_cvtsi64_si128(static_cast<int64_t>(buffer));
  }
  if constexpr (std::is_same_v<TA, uint8_t>) {
    return _mm256_cvtepu8_epi32(bytes);
  } else {
    return _mm256_cvtepi8_epi32(bytes);
  }
}

template <typename TA, QGemmStage kStage>
void Run(const QDwConvUkernelArgs& a) {
  const QGemmUkernelParams& p = *a.params;
  const size_t cp = QDwConvPaddedChannels(a.channels), taps = a.taps;
  const size_t out_size = kStage == QGemmStage::kS32 || kStage == QGemmStage::kF32 ? 4 : 1;
  alignas(32) int32_t wide[kQDwConvMaxTaps * 8];
  alignas(32) int32_t tile[kPixels * 8];
  for (size_t c0 = 0; c0 < a.channels; c0 += 8) {
    const size_t cols = a.channels - c0 < 8 ? a.channels - c0 : 8;
    for (size_t t = 0; t < taps; ++t) {
      const __m128i w16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.w + t * cp + c0));
      _mm256_store_si256(reinterpret_cast<__m256i*>(wide + t * 8), _mm256_cvtepu16_epi32(w16));
    }
    for (size_t px0 = 0; px0 < a.pixels; px0 += kPixels) {
      const size_t rows = a.pixels - px0 < kPixels ? a.pixels - px0 : kPixels;
      for (size_t r = 0; r < rows; ++r) {
        const void* const* in = a.input + (px0 + r) * taps;
        __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
        size_t t = 0;
        for (; t + 2 <= taps; t += 2) {
          const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(wide + t * 8));
          const __m256i w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(wide + t * 8 + 8));
          acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(LoadInput<TA>(in[t], c0, cols), w0));
          acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(LoadInput<TA>(in[t + 1], c0, cols), w1));
        }
        if (t < taps) {
          const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(wide + t * 8));
          acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(LoadInput<TA>(in[t], c0, cols), w0));
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * 8), _mm256_add_epi32(acc0, acc1));
      }
      void* y = static_cast<uint8_t*>(a.y) + px0 * a.y_pixel_stride * out_size;
      avx2::Epilogue<kStage>(tile, 8, rows, cols, 0, p, 0, c0, y, a.y_pixel_stride);
    }
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(avx2, 8)

}  // namespace octet
