// AVX-512 VNNI qdwconv kernels. Tile: 16 channels (one zmm of int32 lanes) x up to 8 output pixels, then qgemm's
// AVX-512 epilogue over the 8 x 16 block of accumulators.
// Each int32 lane holds one channel: the input byte widened to 32 bits (zero- or sign-extended) and the weight as a
// zero-extended int16, so vpdpwssd's pairwise product x_lo * w_lo + x_hi * 0 is exactly x * w (the high half of a
// sign-extended negative input meets a 0 weight half).
// Registers: 3x3 and 5x5 filters are compiled with their tap count, so a channel block's 9 or 25 widened weight
// vectors stay in zmm registers across its pixels (up to 25 weights + 8 accumulators of the 32: GCC may reload a few
// weights from L1 for 5x5); other tap counts read them from a widened stack copy. Full groups of 8 pixels run as 8
// independent accumulator chains, the rest with two chains per pixel, to hide vpdpwssd's latency. Input loads are
// masked to the block's channels, so no input byte past `channels` is read.
#include <immintrin.h>

#include <type_traits>

#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"
#include "ops/ukernels/qgemm/avx512_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kPixels = 8;

template <typename TA>
inline __m512i Widen(__m128i bytes) {
  if constexpr (std::is_same_v<TA, uint8_t>) {
    return _mm512_cvtepu8_epi32(bytes);
  } else {
    return _mm512_cvtepi8_epi32(bytes);
  }
}

// A masked load even for full blocks: specializing full blocks apart doubles the (already unrolled) code for a gain
// within noise, and the compile time of this file under ASan with it.
template <typename TA>
inline __m512i LoadInput(const void* row, size_t c0, __mmask16 mask) {
  return Widen<TA>(_mm_maskz_loadu_epi8(mask, static_cast<const uint8_t*>(row) + c0));
}

// One channel block [c0, c0 + cols) over every pixel. kTaps = 0: the tap count is a.taps (weights from `wide`).
template <typename TA, QGemmStage kStage, size_t kTaps>
OCTET_INLINE inline void Block(const QDwConvUkernelArgs& a, size_t c0, size_t cols, const int32_t* wide) {
  const size_t taps = kTaps != 0 ? kTaps : a.taps;
  const size_t out_size = kStage == QGemmStage::kS32 || kStage == QGemmStage::kF32 ? 4 : 1;
  const __mmask16 mask = avx512::TailMask(cols);
  alignas(64) int32_t tile[kPixels * 16];
  [[maybe_unused]] __m512i w[kTaps != 0 ? kTaps : 1];
  if constexpr (kTaps != 0) {
    Unroll<kTaps>([&](auto t) OCTET_INLINE { w[t] = _mm512_load_si512(wide + t * 16); });
  }
  for (size_t px0 = 0; px0 < a.pixels; px0 += kPixels) {
    const size_t rows = a.pixels - px0 < kPixels ? a.pixels - px0 : kPixels;
    if constexpr (kTaps != 0) {
      if (rows == kPixels) {
        // Eight pixels side by side: eight independent vpdpwssd chains keep the unit busy (one pixel's chain alone
        // waits on vpdpwssd's latency at every tap).
        const void* const* in = a.input + px0 * taps;
        __m512i acc[kPixels];
        Unroll<kPixels>([&](auto r) OCTET_INLINE { acc[r] = _mm512_setzero_si512(); });
        Unroll<kTaps>([&](auto t) OCTET_INLINE {
          Unroll<kPixels>([&](auto r) OCTET_INLINE {
            acc[r] = _mm512_dpwssd_epi32(acc[r], LoadInput<TA>(in[r * kTaps + t], c0, mask), w[t]);
          });
        });
        Unroll<kPixels>([&](auto r) OCTET_INLINE { _mm512_store_si512(tile + r * 16, acc[r]); });
      }
    }
    if (kTaps == 0 || rows != kPixels) {
      for (size_t r = 0; r < rows; ++r) {
        const void* const* in = a.input + (px0 + r) * taps;
        __m512i acc[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
        if constexpr (kTaps != 0) {
          Unroll<kTaps>([&](auto t) OCTET_INLINE {
            acc[t % 2] = _mm512_dpwssd_epi32(acc[t % 2], LoadInput<TA>(in[t], c0, mask), w[t]);
          });
        } else {
          for (size_t t = 0; t < taps; ++t) {
            const __m512i wt = _mm512_load_si512(wide + t * 16);
            acc[t % 2] = _mm512_dpwssd_epi32(acc[t % 2], LoadInput<TA>(in[t], c0, mask), wt);
          }
        }
        _mm512_store_si512(tile + r * 16, _mm512_add_epi32(acc[0], acc[1]));
      }
    }
    void* y = static_cast<uint8_t*>(a.y) + px0 * a.y_pixel_stride * out_size;
    avx512::Epilogue<kStage>(tile, 16, rows, cols, 0, *a.params, 0, c0, y, a.y_pixel_stride);
  }
}

template <typename TA, QGemmStage kStage, size_t kTaps>
void RunTaps(const QDwConvUkernelArgs& a) {
  const size_t cp = QDwConvPaddedChannels(a.channels), taps = a.taps;
  alignas(64) int32_t wide[kQDwConvMaxTaps * 16];
  for (size_t c0 = 0; c0 < a.channels; c0 += 16) {
    const size_t cols = a.channels - c0 < 16 ? a.channels - c0 : 16;
    for (size_t t = 0; t < taps; ++t) {
      const __m256i w16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.w + t * cp + c0));
      _mm512_store_si512(wide + t * 16, _mm512_cvtepu16_epi32(w16));
    }
    Block<TA, kStage, kTaps>(a, c0, cols, wide);
  }
}

// Under AddressSanitizer the fully unrolled 3x3 / 5x5 bodies take clang minutes to instrument; the generic loop
// does the same loads and arithmetic, so sanitized builds use it for every tap count.
#if defined(__SANITIZE_ADDRESS__)
#define OCTET_QDWCONV_SPECIALIZE_TAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OCTET_QDWCONV_SPECIALIZE_TAPS 0
#endif
#endif
#ifndef OCTET_QDWCONV_SPECIALIZE_TAPS
#define OCTET_QDWCONV_SPECIALIZE_TAPS 1
#endif

template <typename TA, QGemmStage kStage>
void Run(const QDwConvUkernelArgs& a) {
  if constexpr (OCTET_QDWCONV_SPECIALIZE_TAPS == 0) {
    RunTaps<TA, kStage, 0>(a);
  } else {
    switch (a.taps) {
      case 9: RunTaps<TA, kStage, 9>(a); break;
      case 25: RunTaps<TA, kStage, 25>(a); break;
      default: RunTaps<TA, kStage, 0>(a); break;
    }
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(avx512vnni, 16)

}  // namespace octet
