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
// (avx2_epilogue.h).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

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

template <int M, bool kFlip>
void MaddDot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, int32_t* tile) {
  __m256i acc[M][2];
  const uint8_t* rows[M];
  uint8_t last[M][4];
  Unroll<M>([&](auto r) OCTET_INLINE {
    rows[r] = a + r * a_stride;
    acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  });
  const __m256i ones = _mm256_set1_epi16(1);
  auto group = [&](size_t g) OCTET_INLINE {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + g * 64));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + g * 64 + 32));
    Unroll<M>([&](auto r) OCTET_INLINE {
      __m256i av = _mm256_broadcastd_epi32(_mm_loadu_si32(rows[r]));  // vpbroadcastd ymm, m32: a load only
      rows[r] += 4;
      if constexpr (kFlip) av = _mm256_xor_si256(av, _mm256_set1_epi32(static_cast<int32_t>(0x80808080u)));
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w0), ones));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w1), ones));
    });
    // Pinned: otherwise GCC copies every accumulator between registers (and spills one) each group, to hand them to
    // the tail group after the loop.
    Unroll<M>([&](auto r) OCTET_INLINE {
      PinRegister(acc[r][0]);
      PinRegister(acc[r][1]);
    });
  };
  // The full groups in a loop of their own (no per-group test for the tail), then the partial one from the copies.
  const size_t full = k / 4, tail = k % 4;
  for (size_t g = 0; g < full; ++g) group(g);
  if (tail != 0) {
    Unroll<M>([&](auto r) OCTET_INLINE {
      std::memset(last[r], 0, 4);
      std::memcpy(last[r], rows[r], tail);
      rows[r] = last[r];
    });
    group(full);
  }
  Unroll<M>([&](auto r) OCTET_INLINE {
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr + 8), acc[r][1]);
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

template <bool kSignedA, QGemmStage kStage>
void RunMaddubs(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.params->stage.stage == kStage);
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
