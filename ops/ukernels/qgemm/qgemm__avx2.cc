// AVX2 qgemm kernels (no VNNI), three ways to multiply u8 x s8 exactly:
//
// 4x16c4_maddubs: vpmaddubsw (u8 x s8 pairs summed in saturating int16) then vpmaddwd by ones (pairs to int32),
//   vpaddd: 3 instructions per 8 columns x 4 k. Only exact when no pair a0*w0 + a1*w1 can leave int16, so the list
//   makes it conditional (QGemmRequirement::kPairSumsFitInt16: e.g. 7-bit activations, or weights within [-64, 64]);
//   the dispatch checks the actual operand ranges. Per k group: 2 ymm of W, per row of 4 one vpbroadcastd of A;
//   8 ymm accumulators. s8 activations are fed as u8 (xor 0x80) and corrected by 128 * col_sums.
// 3x24c2: the exact path at vpmaddwd speed. The weights were widened to int16 at prepack (kQGemmLayoutX86Wide: 24
//   columns x a pair of k per 96-byte row), so the inner loop is vpmaddwd + vpaddd only: per pair of k, 3 ymm of W
//   (8 columns each, one int32 per column: no folding at the end) and per row one vpbroadcastd of 4 A bytes and a
//   vpshufb that zero-extends the pair (a0, a1) into every dword; |a0 w0 + a1 w1| <= 2 * 255 * 128 fits int32.
//   9 ymm accumulators, 3 of W, 2 shuffle masks, 1 of A. s8 activations are fed as u8 (xor 0x80) and corrected by
//   128 * col_sums. For M below its minimum the s8-layout kernel below runs (it reads half the weight bytes).
// 2x16c4: the always-exact widening path over the s8 layout. W bytes are sign-extended to int16 (vpmovsxbw: 4
//   columns x 4 k per ymm), the 4 bytes of A zero- or sign-extended to int16 and broadcast, vpmaddwd gives two int32
//   partial sums per column (|a * w| <= 255 * 128, a pair <= 65,280: no overflow), accumulated in 4 ymm per row and
//   folded with vphaddd at the end. s8 activations need no offset here.
// 4x16c4 and 2x16c4 read kQGemmLayoutX86 (64-byte rows of 16 columns x 4 k). The last partial k group reads A from a
// zero-padded copy (no over-read of A). The dot products go to an L1-resident tile, then the output stage
// (avx2_epilogue.h); except the 4x16 kernel's fp32 stage with byte outputs and no weight zero points, which runs on the
// accumulators in registers (MaddDotFp32).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/ukernels/copy_short.h"
#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/avx2_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kNr = 16;

// Both kernels walk K in groups of 4; the last group of a K that is not a multiple of 4 reads A from a zero-padded
// copy (the packed W is zero there).
// ---- vpmaddubsw, 4x16 ----
// An empty asm that needs v in a register: the compiler cannot move arithmetic across it. (A function of its own:
// clang 14 rejects a lambda's captured variable as an asm operand.)
__attribute__((always_inline)) inline void PinRegister(__m256i& v) { __asm__("" : "+x"(v)); }

constexpr size_t kMaddMr = 4;

// The dot products of M rows over all of K, added to the accumulators' initial values (zero, or the column offsets
// of the fused output stage: adding them first or last is the same mod 2^32).
template <int M, bool kFlip>
__attribute__((always_inline)) inline void MaddAccumulate(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w,
                                                          __m256i (&acc)[M][2]) {
  const uint8_t* rows[M];
  Unroll<M>([&](auto r) OCTET_INLINE { rows[r] = a + r * a_stride; });
  const __m256i ones = _mm256_set1_epi16(1);
  // Row r's 4 bytes of A (in every dword of av) times a group of the panel (w0, w1), into its accumulators.
  auto mac = [&](auto r, __m256i av, __m256i w0, __m256i w1) OCTET_INLINE {
    if constexpr (kFlip) av = _mm256_xor_si256(av, _mm256_set1_epi32(static_cast<int32_t>(0x80808080u)));
    acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w0), ones));
    acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w1), ones));
  };
  // The partial group first, its 1-3 bytes per row gathered into a zero-padded dword (the packed W is zero there;
  // byte loads, not a memcpy call of a variable size: 4 calls per tile took a third of MobileNetV2's K = 27 stem),
  // then the full groups in a loop that ends the function: with the partial group after the loop, GCC kept a copy of
  // every accumulator on the stack and stored all eight each group.
  const size_t full = k / 4, tail = k % 4;
  if (tail != 0) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + full * 64));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + full * 64 + 32));
    Unroll<M>([&](auto r) OCTET_INLINE {
      const uint8_t* src = rows[r] + full * 4;
      uint32_t v = src[0];
      if (tail > 1) v |= uint32_t{src[1]} << 8;
      if (tail > 2) v |= uint32_t{src[2]} << 16;
      mac(r, _mm256_set1_epi32(static_cast<int32_t>(v)), w0, w1);
    });
  }
  for (size_t g = 0; g < full; ++g) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + g * 64));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + g * 64 + 32));
    Unroll<M>([&](auto r) OCTET_INLINE {
      mac(r, _mm256_broadcastd_epi32(_mm_loadu_si32(rows[r] + g * 4)), w0, w1);  // vpbroadcastd ymm, m32: a load only
    });
  }
}

template <int M, bool kFlip>
void MaddDot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, int32_t* tile) {
  __m256i acc[M][2];
  Unroll<M>([&](auto r) OCTET_INLINE { acc[r][0] = acc[r][1] = _mm256_setzero_si256(); });
  MaddAccumulate<M, kFlip>(a, a_stride, k, w, acc);
  Unroll<M>([&](auto r) OCTET_INLINE {
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr + 8), acc[r][1]);
  });
}

// The fp32 stage fused into the 4x16 kernel for byte outputs without weight zero points (MobileNetV2's 1x1 layers
// and stem, K = 16 to 32: the round trip of the accumulators through a tile and the stage's per-tile setup took a
// third of their time). Per panel of 16 columns: the accumulators start at the column offsets (less a_offset *
// col_sums), then float(acc) * multiplier clamped to [lo - zp, hi - zp], rounded to nearest even, packed to int16,
// plus zp, packed to bytes: the arithmetic of avx2::Epilogue, with the zero point added after the first pack (the
// clamped values are within int16, so nothing saturates there).
struct FusedFp32Columns {
  alignas(32) int32_t offset[kNr];
  alignas(32) float multiplier[kNr];
  float lo, hi;  // lo - zp, hi - zp
  int16_t zero_point;
};

template <int M, bool kFlip, bool kUnsignedOut>
void MaddDotFp32(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, const FusedFp32Columns& c, uint8_t* y,
                 size_t y_stride, size_t cols) {
  __m256i acc[M][2];
  Unroll<M>([&](auto r) OCTET_INLINE {
    acc[r][0] = _mm256_load_si256(reinterpret_cast<const __m256i*>(c.offset));
    acc[r][1] = _mm256_load_si256(reinterpret_cast<const __m256i*>(c.offset + 8));
  });
  MaddAccumulate<M, kFlip>(a, a_stride, k, w, acc);
  const __m256 m0 = _mm256_load_ps(c.multiplier), m1 = _mm256_load_ps(c.multiplier + 8);
  const __m256 lo = _mm256_set1_ps(c.lo), hi = _mm256_set1_ps(c.hi);
  const __m256i zp = _mm256_set1_epi16(c.zero_point);
  auto quantize = [&](__m256i v, __m256 m) OCTET_INLINE {
    return _mm256_cvtps_epi32(_mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_mul_ps(_mm256_cvtepi32_ps(v), m))));
  };
  // Row r's 16 values as int16 (columns 0-3, 8-11 | 4-7, 12-15), zero point added.
  auto row16 = [&](auto r) OCTET_INLINE {
    return _mm256_add_epi16(_mm256_packs_epi32(quantize(acc[r][0], m0), quantize(acc[r][1], m1)), zp);
  };
  // After the byte pack, dword k of lane 0 / 1 holds 4 bytes of: row a cols 0-3 / 4-7, row a cols 8-11 / 12-15,
  // then row b likewise; this order puts row a in the low half and row b in the high half.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  Unroll<(M + 1) / 2>([&](auto p) OCTET_INLINE {
    constexpr size_t ra = 2 * p, rb = 2 * p + 1 < M ? 2 * p + 1 : 2 * p;
    const __m256i a16 = row16(std::integral_constant<size_t, ra>{});
    const __m256i b16 = rb == ra ? a16 : row16(std::integral_constant<size_t, rb>{});
    const __m256i bytes =
        _mm256_permutevar8x32_epi32(kUnsignedOut ? _mm256_packus_epi16(a16, b16) : _mm256_packs_epi16(a16, b16), order);
    uint8_t* ya = y + ra * y_stride;
    if (cols == kNr) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(ya), _mm256_castsi256_si128(bytes));
      if constexpr (rb != ra) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ya + y_stride), _mm256_extracti128_si256(bytes, 1));
      }
    } else {
      alignas(32) uint8_t buffer[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(buffer), bytes);
      CopyShort(ya, buffer, cols);
      if constexpr (rb != ra) CopyShort(ya + y_stride, buffer + 16, cols);
    }
  });
}

// ---- vpmaddwd over int16 weights, 3x24 ----
constexpr size_t kW16Mr = 3, kW16Nr = 24;

// Adds the dot products over k (a chunk of K) to tile (M rows of 24 int32, 32-byte aligned).
template <int M, bool kFlip>
void W16Dot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w_bytes, int32_t* tile) {
  const auto* w = reinterpret_cast<const __m256i*>(w_bytes);
  __m256i acc[M][3];
  const uint8_t* rows[M];
  uint8_t last[M][4];
  Unroll<M>([&](auto r) OCTET_INLINE {
    rows[r] = a + r * a_stride;
    Unroll<3>([&](auto q) OCTET_INLINE {
      acc[r][q] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + r * kW16Nr + 8 * q));
    });
  });
  // Bytes 0, 1 (then 2, 3) of each dword to the low bytes of its two words, zeros above.
  const __m256i pair01 = _mm256_set1_epi32(static_cast<int32_t>(0x80018000u));
  const __m256i pair23 = _mm256_set1_epi32(static_cast<int32_t>(0x80038002u));
  // One group of 4 k: per pair, 3 W vectors, then per row a broadcast, a shuffle and 3 vpmaddwd + vpaddd. The empty
  // asm with a memory clobber between the pairs makes the compiler load A again rather than keep each row's
  // broadcast live across both pairs, which would spill accumulators (9 + 3 + 2 masks + 1 of the 16 ymm).
  auto group = [&]() OCTET_INLINE {
    Unroll<2>([&](auto half) OCTET_INLINE {
      __m256i wv[3];
      Unroll<3>([&](auto q) OCTET_INLINE { wv[q] = _mm256_loadu_si256(w + half * 3 + q); });
      Unroll<M>([&](auto r) OCTET_INLINE {
        __m256i av = _mm256_broadcastd_epi32(_mm_loadu_si32(rows[r]));
        if constexpr (kFlip) av = _mm256_xor_si256(av, _mm256_set1_epi32(static_cast<int32_t>(0x80808080u)));
        av = _mm256_shuffle_epi8(av, half == 0 ? pair01 : pair23);
        Unroll<3>([&](auto q) OCTET_INLINE { acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(av, wv[q])); });
      });
      // Pin the accumulators here: otherwise GCC reassociates the two pairs' products into sums of their own
      // before adding them, which needs more registers than there are.
      Unroll<M>([&](auto r) OCTET_INLINE { Unroll<3>([&](auto q) OCTET_INLINE { PinRegister(acc[r][q]); }); });
      if constexpr (half == 0) __asm__ volatile("" ::: "memory");
    });
    w += 6;
    Unroll<M>([&](auto r) OCTET_INLINE { rows[r] += 4; });
  };
  const size_t full = k / 4, tail = k % 4;
  for (size_t g = 0; g < full; ++g) group();
  if (tail != 0) {
    Unroll<M>([&](auto r) OCTET_INLINE {
      std::memset(last[r], 0, 4);
      std::memcpy(last[r], rows[r], tail);
      rows[r] = last[r];
    });
    group();
  }
  Unroll<M>([&](auto r) OCTET_INLINE {
    Unroll<3>([&](auto q) OCTET_INLINE {
      _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kW16Nr + 8 * q), acc[r][q]);
    });
  });
}

// ---- widening vpmaddwd, 2x16 ----
constexpr size_t kWideMr = 2;

template <int M, bool kSignedA>
void WideDot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, int32_t* tile) {
  __m256i acc[M][4];
  const uint8_t* rows[M];
  uint8_t last[M][4];
  Unroll<M>([&](auto r) OCTET_INLINE {
    rows[r] = a + r * a_stride;
    Unroll<4>([&](auto q) OCTET_INLINE { acc[r][q] = _mm256_setzero_si256(); });
  });
  const size_t groups = (k + 3) / 4, tail = k % 4;
  for (size_t g = 0; g < groups; ++g) {
    if (tail != 0 && g + 1 == groups) {
      Unroll<M>([&](auto r) OCTET_INLINE {
        std::memset(last[r], 0, 4);
        std::memcpy(last[r], rows[r], tail);
        rows[r] = last[r];
      });
    }
    __m256i wv[4];
    Unroll<4>([&](auto q) OCTET_INLINE {
      wv[q] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + g * 64 + 16 * q)));
    });
    Unroll<M>([&](auto r) OCTET_INLINE {
      const __m128i bytes = _mm_loadu_si32(rows[r]);
      rows[r] += 4;
      const __m128i a16 = kSignedA ? _mm_cvtepi8_epi16(bytes) : _mm_cvtepu8_epi16(bytes);
      const __m256i av = _mm256_broadcastq_epi64(a16);
      Unroll<4>([&](auto q) OCTET_INLINE { acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(av, wv[q])); });
    });
  }
  // acc[r][q] holds columns 4q..4q+3 as two partial sums each: [c0 c0 c1 c1 | c2 c2 c3 c3]. vphaddd of columns 0-3
  // and 4-7 gives [c0 c1 c4 c5 | c2 c3 c6 c7]; vpermq 0xD8 puts them in order.
  Unroll<M>([&](auto r) OCTET_INLINE {
    const __m256i lo = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8);
    const __m256i hi = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][2], acc[r][3]), 0xD8);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr + 8), hi);
  });
}

using DotFn = void (*)(const uint8_t*, size_t, size_t, const int8_t*, int32_t*);

using FusedFp32Fn = void (*)(const uint8_t*, size_t, size_t, const int8_t*, const FusedFp32Columns&, uint8_t*, size_t,
                             size_t);

template <bool kSignedA, bool kUnsignedOut>
void RunMaddubsFp32(const QGemmUkernelArgs& args) {
  static constexpr FusedFp32Fn kTable[kMaddMr] = {
      &MaddDotFp32<1, kSignedA, kUnsignedOut>, &MaddDotFp32<2, kSignedA, kUnsignedOut>,
      &MaddDotFp32<3, kSignedA, kUnsignedOut>, &MaddDotFp32<4, kSignedA, kUnsignedOut>};
  const QGemmUkernelParams& p = *args.params;
  const QGemmStageParams& s = p.stage;
  const auto* a = static_cast<const uint8_t*>(args.a);
  auto* y = static_cast<uint8_t*>(args.y);
  FusedFp32Columns c;
  c.lo = static_cast<float>(s.lo - s.zero_point);
  c.hi = static_cast<float>(s.hi - s.zero_point);
  c.zero_point = static_cast<int16_t>(s.zero_point);
  for (size_t j0 = 0; j0 < args.n; j0 += kNr) {
    const size_t cols = std::min(args.n - j0, kNr);
    for (size_t h = 0; h < kNr; h += 8) {
      __m256i offset = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.col_offsets + j0 + h));
      if constexpr (kSignedA) {
        const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.col_sums + j0 + h));
        offset = _mm256_sub_epi32(offset, _mm256_mullo_epi32(sums, _mm256_set1_epi32(128)));
      }
      _mm256_store_si256(reinterpret_cast<__m256i*>(c.offset + h), offset);
      _mm256_store_ps(c.multiplier + h, _mm256_loadu_ps(s.multipliers + j0 + h));
    }
    const int8_t* w = args.w + (j0 / kNr) * args.w_panel_stride;
    for (size_t i0 = 0; i0 < args.m; i0 += kMaddMr) {
      const size_t rows = std::min(args.m - i0, kMaddMr);
      kTable[rows - 1](a + i0 * args.a_stride, args.a_stride, args.k, w, c, y + i0 * args.y_stride + j0, args.y_stride,
                       cols);
    }
  }
}

template <bool kSignedA, QGemmStage kStage>
void RunMaddubs(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  if constexpr (kStage == QGemmStage::kFp32) {
    // Byte outputs without weight zero points: the stage in registers (MaddDotFp32).
    const QGemmStageParams& s = args.params->stage;
    if (args.params->w_zero_points == nullptr) {
      if (s.lo >= 0 && s.hi <= 255) return RunMaddubsFp32<kSignedA, true>(args);
      if (s.lo >= -128 && s.hi <= 127) return RunMaddubsFp32<kSignedA, false>(args);
    }
  }
  static constexpr DotFn kTable[kMaddMr] = {&MaddDot<1, kSignedA>, &MaddDot<2, kSignedA>, &MaddDot<3, kSignedA>,
                                            &MaddDot<4, kSignedA>};
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t tile[kMaddMr * kNr];
  QGemmForEachTile<kMaddMr, kNr>(args.m, args.n, [&](size_t i0, size_t rows, size_t j0, size_t cols) {
    kTable[rows - 1](a + i0 * args.a_stride, args.a_stride, args.k, args.w + (j0 / 16) * args.w_panel_stride, tile);
    avx2::Epilogue<kStage>(tile, kNr, rows, cols, kSignedA ? 128 : 0, *args.params, i0, j0, args.y, args.y_stride);
  });
}

template <bool kSignedA, QGemmStage kStage>
void RunWide(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  static constexpr DotFn kTable[kWideMr] = {&WideDot<1, kSignedA>, &WideDot<2, kSignedA>};
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t tile[kWideMr * kNr];
  QGemmForEachTile<kWideMr, kNr>(args.m, args.n, [&](size_t i0, size_t rows, size_t j0, size_t cols) {
    kTable[rows - 1](a + i0 * args.a_stride, args.a_stride, args.k, args.w + (j0 / 16) * args.w_panel_stride, tile);
    avx2::Epilogue<kStage>(tile, kNr, rows, cols, 0, *args.params, i0, j0, args.y, args.y_stride);
  });
}

// K is walked in chunks so that a panel's chunk (24 x 256 k x 2 bytes = 12 KB) stays in L1 while the row tiles of a
// group of rows pass over it; the group's partial sums wait in a stack buffer (48 x 24 int32 = 4.5 KB). Without the
// chunks, K = 768 or more makes the panel larger than L1 and every 3-row tile streams it from L2 again.
constexpr size_t kW16Kc = 256;
constexpr size_t kW16GroupRows = 16 * kW16Mr;

template <bool kSignedA, QGemmStage kStage>
void RunW16(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86Wide);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  static constexpr DotFn kTable[kW16Mr] = {&W16Dot<1, kSignedA>, &W16Dot<2, kSignedA>, &W16Dot<3, kSignedA>};
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t sums[kW16GroupRows * kW16Nr];
  for (size_t j0 = 0; j0 < args.n; j0 += kW16Nr) {
    const size_t cols = std::min(args.n - j0, kW16Nr);
    const int8_t* panel = args.w + (j0 / kW16Nr) * args.w_panel_stride;
    for (size_t g0 = 0; g0 < args.m; g0 += kW16GroupRows) {
      const size_t group_rows = std::min(args.m - g0, kW16GroupRows);
      std::memset(sums, 0, group_rows * kW16Nr * sizeof(int32_t));
      for (size_t k0 = 0; k0 < args.k; k0 += kW16Kc) {
        const size_t kc = std::min(args.k - k0, kW16Kc);
        for (size_t r0 = 0; r0 < group_rows; r0 += kW16Mr) {
          const size_t rows = std::min(group_rows - r0, kW16Mr);
          // A chunk of k starts k0 * 48 bytes into the panel (96 bytes per pair of k).
          kTable[rows - 1](a + (g0 + r0) * args.a_stride + k0, args.a_stride, kc, panel + k0 * 48, sums + r0 * kW16Nr);
        }
      }
      avx2::Epilogue<kStage>(sums, kW16Nr, group_rows, cols, kSignedA ? 128 : 0, *args.params, g0, j0, args.y,
                             args.y_stride);
    }
  }
}

}  // namespace

void qgemm_u8s8_s32_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kS32>(args);
}
void qgemm_u8s8_minmax_fp32_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kFp32>(args);
}
void qgemm_u8s8_minmax_q31_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kQ31>(args);
}
void qgemm_u8s8_minmax_fbgemm_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kF32>(args);
}
void qgemm_s8s8_s32_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kS32>(args);
}
void qgemm_s8s8_minmax_fp32_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kFp32>(args);
}
void qgemm_s8s8_minmax_q31_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kQ31>(args);
}
void qgemm_s8s8_minmax_fbgemm_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_4x16c4_maddubs__avx2(const QGemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kF32>(args);
}

void qgemm_u8s8_s32_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) { RunW16<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) {
  RunW16<false, QGemmStage::kFp32>(args);
}
void qgemm_u8s8_minmax_q31_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) { RunW16<false, QGemmStage::kQ31>(args); }
void qgemm_u8s8_minmax_fbgemm_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) {
  RunW16<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) { RunW16<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) { RunW16<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) {
  RunW16<true, QGemmStage::kFp32>(args);
}
void qgemm_s8s8_minmax_q31_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) { RunW16<true, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) {
  RunW16<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_3x24c2__avx2(const QGemmUkernelArgs& args) { RunW16<true, QGemmStage::kF32>(args); }

void qgemm_u8s8_s32_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) { RunWide<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) {
  RunWide<false, QGemmStage::kFp32>(args);
}
void qgemm_u8s8_minmax_q31_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) {
  RunWide<false, QGemmStage::kQ31>(args);
}
void qgemm_u8s8_minmax_fbgemm_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) {
  RunWide<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) { RunWide<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) { RunWide<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) {
  RunWide<true, QGemmStage::kFp32>(args);
}
void qgemm_s8s8_minmax_q31_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) { RunWide<true, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) {
  RunWide<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_2x16c4__avx2(const QGemmUkernelArgs& args) { RunWide<true, QGemmStage::kF32>(args); }

}  // namespace octet
