// AVX2 qdwconv kernels. Tile: 8 channels (one ymm of int32 lanes) x up to 8 output pixels, then qgemm's AVX2
// epilogue over the 8 x 8 block of accumulators.
// Each int32 lane holds one channel: the input byte widened to 32 bits (zero- or sign-extended) and the weight as a
// zero-extended int16, so vpmaddwd's x_lo * w_lo + x_hi * 0 is exactly x * w (exact: no int16 saturation, unlike
// vpmaddubsw). Registers: a 3x3 filter is compiled with its tap count and keeps its 9 widened weight vectors in ymm
// registers across the block's pixels (9 + 2 accumulators + input of the 16); other tap counts read them from a
// widened stack copy; full groups of 8 pixels of a 3x3 filter run four pixels side by side. A channel tail (< 8) is
// copied into a small buffer, so no input byte past `channels` is read.
// With args.w_quads set (7-bit activations, or weights within [-64, 64]), whole blocks of 32 channels go four taps at
// a time: the taps' bytes interleaved per channel by two rounds of in-lane unpacks, vpmaddubsw against the
// quad-packed s8 weights (exact when its pair sums fit int16, which either condition guarantees), vpmaddwd with ones
// to int32: half the multiply and shuffle instructions of the widening path.
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "ops/ukernels/qdwconv.h"
#include "ops/ukernels/qdwconv/define.h"
#include "ops/ukernels/qgemm/avx2_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kPixels = 8;

template <typename TA, bool kTail>
inline __m256i LoadInput(const void* row, size_t c0, size_t cols) {
  const auto* src = static_cast<const uint8_t*>(row) + c0;
  __m128i bytes;
  if constexpr (kTail) {
    uint64_t buffer = 0;
    std::memcpy(&buffer, src, cols);
    bytes = _mm_cvtsi64_si128(static_cast<int64_t>(buffer));
  } else {
    bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
  }
  if constexpr (std::is_same_v<TA, uint8_t>) {
    return _mm256_cvtepu8_epi32(bytes);
  } else {
    return _mm256_cvtepi8_epi32(bytes);
  }
}

inline __m256i LoadWide(const int32_t* wide, size_t t) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(wide + t * 8));
}

// One channel block [c0, c0 + cols) over every pixel. kTaps = 0: the tap count is a.taps.
template <typename TA, QGemmStage kStage, size_t kTaps, bool kTail>
OCTET_INLINE inline void Block(const QDwConvUkernelArgs& a, size_t c0, size_t cols, const int32_t* wide) {
  const size_t taps = kTaps != 0 ? kTaps : a.taps;
  const size_t out_size = kStage == QGemmStage::kS32 || kStage == QGemmStage::kF32 ? 4 : 1;
  constexpr bool kInRegisters = kTaps != 0 && kTaps <= 9;
  alignas(32) int32_t tile[kPixels * 8];
  [[maybe_unused]] __m256i w[kInRegisters ? kTaps : 1];
  if constexpr (kInRegisters) {
    Unroll<kTaps>([&](auto t) OCTET_INLINE { w[t] = LoadWide(wide, t); });
  }
  for (size_t px0 = 0; px0 < a.pixels; px0 += kPixels) {
    const size_t rows = a.pixels - px0 < kPixels ? a.pixels - px0 : kPixels;
    if constexpr (kInRegisters) {
      if (rows == kPixels) {
        // Four pixels side by side (9 weights + 4 accumulators + temporaries fit the 16 ymm registers): independent
        // vpmaddwd / vpaddd chains instead of one pixel's dependent adds.
        for (size_t r0 = 0; r0 < kPixels; r0 += 4) {
          const void* const* in = a.input + (px0 + r0) * taps;
          __m256i acc[4];
          Unroll<4>([&](auto r) OCTET_INLINE { acc[r] = _mm256_setzero_si256(); });
          Unroll<kTaps>([&](auto t) OCTET_INLINE {
            Unroll<4>([&](auto r) OCTET_INLINE {
              acc[r] = _mm256_add_epi32(acc[r],
                                        _mm256_madd_epi16(LoadInput<TA, kTail>(in[r * kTaps + t], c0, cols), w[t]));
            });
          });
          Unroll<4>([&](auto r) OCTET_INLINE {
            _mm256_store_si256(reinterpret_cast<__m256i*>(tile + (r0 + r) * 8), acc[r]);
          });
        }
      }
    }
    if (!kInRegisters || rows != kPixels) {
      for (size_t r = 0; r < rows; ++r) {
        const void* const* in = a.input + (px0 + r) * taps;
        __m256i acc[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        if constexpr (kTaps != 0) {
          Unroll<kTaps>([&](auto t) OCTET_INLINE {
            __m256i wt;
            if constexpr (kInRegisters) {
              wt = w[t];
            } else {
              wt = LoadWide(wide, t);
            }
            acc[t % 2] = _mm256_add_epi32(acc[t % 2], _mm256_madd_epi16(LoadInput<TA, kTail>(in[t], c0, cols), wt));
          });
        } else {
          for (size_t t = 0; t < taps; ++t) {
            acc[t % 2] = _mm256_add_epi32(acc[t % 2],
                                          _mm256_madd_epi16(LoadInput<TA, kTail>(in[t], c0, cols), LoadWide(wide, t)));
          }
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * 8), _mm256_add_epi32(acc[0], acc[1]));
      }
    }
    void* y = static_cast<uint8_t*>(a.y) + px0 * a.y_pixel_stride * out_size;
    avx2::Epilogue<kStage>(tile, 8, rows, cols, 0, *a.params, 0, c0, y, a.y_pixel_stride);
  }
}

// 32 channels [c0, c0 + 32) of one pixel over its taps, 7-bit activations: the raw dot products, acc[v] holding
// channels 4v..4v+3 in its low lane and 16+4v..16+4v+3 in its high lane.
// One quad of taps [4q, 4q + 4) into acc.
OCTET_INLINE inline void QuadStep(const void* const* in, size_t taps, size_t q, size_t c0, const int8_t* w,
                                  __m256i acc[4]) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i x[4];
  Unroll<4>([&](auto k) OCTET_INLINE {
    const size_t t = 4 * q + k;
    // Taps past the last have zero weights: a zero vector instead of a load.
    x[k] = t < taps ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint8_t*>(in[t]) + c0))
                    : _mm256_setzero_si256();
  });
  const __m256i a01 = _mm256_unpacklo_epi8(x[0], x[1]), b01 = _mm256_unpackhi_epi8(x[0], x[1]);
  const __m256i a23 = _mm256_unpacklo_epi8(x[2], x[3]), b23 = _mm256_unpackhi_epi8(x[2], x[3]);
  const __m256i e[4] = {_mm256_unpacklo_epi16(a01, a23), _mm256_unpackhi_epi16(a01, a23),
                        _mm256_unpacklo_epi16(b01, b23), _mm256_unpackhi_epi16(b01, b23)};
  const int8_t* wq = w + q * 128;
  Unroll<4>([&](auto v) OCTET_INLINE {
    const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wq + v * 32));
    acc[v] = _mm256_add_epi32(acc[v], _mm256_madd_epi16(_mm256_maddubs_epi16(e[v], wv), ones));
  });
}

// 32 channels [c0, c0 + 32) of one pixel over its taps, 7-bit activations: the raw dot products, acc[v] holding
// channels 4v..4v+3 in its low lane and 16+4v..16+4v+3 in its high lane. A compiled tap count unrolls the quads,
// so the padding taps of the last one cost nothing.
// The accumulators start at init (zero, or the fp32 stage's column offsets: adding them first or last is the same
// mod 2^32).
template <size_t kTaps>
OCTET_INLINE inline void QuadPixel(const void* const* in, size_t taps_rt, size_t c0, const int8_t* w,
                                   const __m256i init[4], __m256i acc[4]) {
  Unroll<4>([&](auto v) OCTET_INLINE { acc[v] = init[v]; });
  if constexpr (kTaps != 0) {
    Unroll<(kTaps + 3) / 4>([&](auto q) OCTET_INLINE { QuadStep(in, kTaps, q, c0, w, acc); });
  } else {
    for (size_t q = 0; q < (taps_rt + 3) / 4; ++q) QuadStep(in, taps_rt, q, c0, w, acc);
  }
}

// Natural-order vectors n[0..4) of channels 0-7, 8-15, 16-23, 24-31 rearranged into QuadPixel's accumulator order.
OCTET_INLINE inline void ToQuadOrder(const __m256i n[4], __m256i out[4]) {
  out[0] = _mm256_permute2x128_si256(n[0], n[2], 0x20);
  out[1] = _mm256_permute2x128_si256(n[0], n[2], 0x31);
  out[2] = _mm256_permute2x128_si256(n[1], n[3], 0x20);
  out[3] = _mm256_permute2x128_si256(n[1], n[3], 0x31);
}
OCTET_INLINE inline void ToQuadOrder(const __m256 n[4], __m256 out[4]) {
  out[0] = _mm256_permute2f128_ps(n[0], n[2], 0x20);
  out[1] = _mm256_permute2f128_ps(n[0], n[2], 0x31);
  out[2] = _mm256_permute2f128_ps(n[1], n[3], 0x20);
  out[3] = _mm256_permute2f128_ps(n[1], n[3], 0x31);
}

// The fp32 stage (the one quantized models use) straight from the accumulators: the block's column parameters put
// in accumulator order once, then per pixel the stage in registers and two rounds of packs, which leave the 32 bytes
// in channel order (exact: the values are already clamped to the output range). The generic tile epilogue spent as
// long storing bytes as the taps took.
template <size_t kTaps>
void QuadBlockFp32(const QDwConvUkernelArgs& a, size_t c0, const int8_t* w) {
  const QGemmUkernelParams& p = *a.params;
  const QGemmStageParams& s = p.stage;
  __m256i offset_n[4], offset[4];
  __m256 mult_n[4], mult[4];
  for (size_t i = 0; i < 4; ++i) {
    offset_n[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.col_offsets + c0 + 8 * i));
    mult_n[i] = _mm256_loadu_ps(s.multipliers + c0 + 8 * i);
  }
  ToQuadOrder(offset_n, offset);
  ToQuadOrder(mult_n, mult);
  // The zero point goes in after the first pack: the clamped values and their sums with it fit int16.
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(s.zero_point));
  const __m256 lo_f = _mm256_set1_ps(static_cast<float>(s.lo - s.zero_point));
  const __m256 hi_f = _mm256_set1_ps(static_cast<float>(s.hi - s.zero_point));
  auto* y = static_cast<uint8_t*>(a.y) + c0;
  for (size_t px = 0; px < a.pixels; ++px) {
    __m256i acc[4];
    QuadPixel<kTaps>(a.input + px * a.taps, a.taps, c0, w, offset, acc);
    __m256i q[4];
    Unroll<4>([&](auto v) OCTET_INLINE {
      const __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[v]), mult[v]);
      q[v] = _mm256_cvtps_epi32(_mm256_min_ps(hi_f, _mm256_max_ps(lo_f, x)));
    });
    const __m256i q01 = _mm256_add_epi16(_mm256_packs_epi32(q[0], q[1]), zp);
    const __m256i q23 = _mm256_add_epi16(_mm256_packs_epi32(q[2], q[3]), zp);
    const __m256i bytes = s.signed_output ? _mm256_packs_epi16(q01, q23) : _mm256_packus_epi16(q01, q23);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + px * a.y_pixel_stride), bytes);
  }
}

// The whole 32-channel blocks on the vpmaddubsw path; returns the first channel left to the widening path.
template <QGemmStage kStage, size_t kTaps>
size_t RunQuads(const QDwConvUkernelArgs& a) {
  const size_t blocks = QDwConvQuadBlocks(a.channels), quads = (a.taps + 3) / 4;
  const size_t out_size = kStage == QGemmStage::kS32 || kStage == QGemmStage::kF32 ? 4 : 1;
  alignas(32) int32_t tile[kPixels * 32];
  for (size_t b = 0; b < blocks; ++b) {
    const int8_t* w = a.w_quads + b * quads * 128;
    if constexpr (kStage == QGemmStage::kFp32) {
      QuadBlockFp32<kTaps>(a, 32 * b, w);
      continue;
    }
    for (size_t px0 = 0; px0 < a.pixels; px0 += kPixels) {
      const size_t rows = a.pixels - px0 < kPixels ? a.pixels - px0 : kPixels;
      for (size_t r = 0; r < rows; ++r) {
        const __m256i zeros[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                                  _mm256_setzero_si256()};
        __m256i acc[4];
        QuadPixel<kTaps>(a.input + (px0 + r) * a.taps, a.taps, 32 * b, w, zeros, acc);
        auto* t = reinterpret_cast<__m256i*>(tile + r * 32);
        _mm256_store_si256(t + 0, _mm256_permute2x128_si256(acc[0], acc[1], 0x20));
        _mm256_store_si256(t + 1, _mm256_permute2x128_si256(acc[2], acc[3], 0x20));
        _mm256_store_si256(t + 2, _mm256_permute2x128_si256(acc[0], acc[1], 0x31));
        _mm256_store_si256(t + 3, _mm256_permute2x128_si256(acc[2], acc[3], 0x31));
      }
      void* y = static_cast<uint8_t*>(a.y) + px0 * a.y_pixel_stride * out_size;
      avx2::Epilogue<kStage>(tile, 32, rows, 32, 0, *a.params, 0, 32 * b, y, a.y_pixel_stride);
    }
  }
  return blocks * 32;
}

template <typename TA, QGemmStage kStage, size_t kTaps>
void RunTaps(const QDwConvUkernelArgs& a) {
  const size_t cp = QDwConvPaddedChannels(a.channels), taps = a.taps;
  alignas(32) int32_t wide[kQDwConvMaxTaps * 8];
  size_t first = 0;
  if constexpr (std::is_same_v<TA, uint8_t>) {
    if (a.w_quads != nullptr) first = RunQuads<kStage, kTaps>(a);
  }
  for (size_t c0 = first; c0 < a.channels; c0 += 8) {
    const size_t cols = a.channels - c0 < 8 ? a.channels - c0 : 8;
    for (size_t t = 0; t < taps; ++t) {
      const __m128i w16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.w + t * cp + c0));
      _mm256_store_si256(reinterpret_cast<__m256i*>(wide + t * 8), _mm256_cvtepu16_epi32(w16));
    }
    if (cols == 8) {
      Block<TA, kStage, kTaps, false>(a, c0, cols, wide);
    } else {
      Block<TA, kStage, kTaps, true>(a, c0, cols, wide);
    }
  }
}

template <typename TA, QGemmStage kStage>
void Run(const QDwConvUkernelArgs& a) {
  switch (a.taps) {
    case 9: RunTaps<TA, kStage, 9>(a); break;
    case 25: RunTaps<TA, kStage, 25>(a); break;
    default: RunTaps<TA, kStage, 0>(a); break;
  }
}

}  // namespace

OCTET_QDWCONV_DEFINE(avx2, 8)

}  // namespace octet
