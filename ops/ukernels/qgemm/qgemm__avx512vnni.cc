// AVX-512 VNNI qgemm kernels, register tile 8x48c4: 8 rows of A by 3 panels of 16 columns.
//
// Layout kQGemmLayoutX86: each packed row of a panel is 16 columns x 4 k = 64 bytes, one zmm operand of vpdpbusd.
// Per k group of 4: 3 zmm loads of W, then for each of the 8 rows one vpbroadcastd of 4 bytes of A and 3 vpdpbusd
// into 24 zmm accumulators (u8 x s8 -> int32, wrapping, no saturation): 24 multiply-adds per 11 loads, 28 of the 32
// zmm registers; the broadcasts are memory-source (load ports only), leaving both vpdpbusd ports free. s8
// activations are fed as u8 (xor 0x80 = +128 on the broadcast) and corrected by 128 * col_sums in the epilogue. A K
// tail of 1-3 bytes goes through a zero-padded copy (no over-read of A); the packed K padding is zero.
// Smaller row or panel counts at the block edges are separate instantiations of the same loop.
// Cache blocking inside a call: for each group of 3 panels, rows go in groups of 64 and K in chunks of 384, so the
// W chunk (48 x 384 = 18 KiB), the A rows of one tile and the group's int32 partial sums (64 x 48 x 4 = 12 KiB) stay
// in L1 while the 8 row tiles of the group pass; the partial sums then get the output stage (avx512_epilogue.h), 16
// columns at a time with masked tails.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/avx512_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kMr = 8;
constexpr size_t kPanels = 3;
constexpr size_t kNr = 16 * kPanels;
constexpr size_t kRowGroup = 64;  // rows whose partial sums stay in L1
constexpr size_t kKChunk = 384;   // k per pass, a multiple of 4

// tile[r][16 * q + c] (+)= sum_k a'[r][k] * w[16 * q + c][k] for r < M, q < P, k a multiple of 4: the tile is
// overwritten, or accumulated into when `accumulate`. Rows are addressed as base + one shared offset, so the loop
// carries a single scalar increment besides the W pointer.
// vpdpbusd has a latency of several cycles and two ports: with fewer than ~10 independent accumulator chains (M = 1
// or 2 rows) the loop waits on its own results, which is the whole story at M = 1 (1 x N x K layers). There the k
// groups are dealt round-robin to S sets of accumulators, summed at the end (int32 addition wraps mod 2^32, so the
// order does not change the result).
template <int M, int P, bool kFlip>
void Dot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, size_t panel_stride, int32_t* tile,
         bool accumulate) {
  constexpr int S = M == 1 ? 4 : (M == 2 ? 2 : 1);
  __m512i acc[S][M][P];
  const uint8_t* rows[M];
  Unroll<M>([&](auto r) OCTET_INLINE {
    rows[r] = a + r * a_stride;
    Unroll<P>([&](auto q) OCTET_INLINE {
      acc[0][r][q] = accumulate ? _mm512_load_si512(tile + r * kNr + 16 * q) : _mm512_setzero_si512();
      Unroll<S - 1>([&](auto s) OCTET_INLINE { acc[s + 1][r][q] = _mm512_setzero_si512(); });
    });
  });
  // One k group of 4 into accumulator set s.
  auto step = [&](auto s, size_t kk, const int8_t* wg) OCTET_INLINE {
    __m512i wv[P];
    Unroll<P>([&](auto q) OCTET_INLINE { wv[q] = _mm512_loadu_si512(wg + q * panel_stride); });
    Unroll<M>([&](auto r) OCTET_INLINE {
      // vpbroadcastd zmm, m32 is a load only; a broadcast from a general register would take a port-5 slot from
      // vpdpbusd.
      __m512i av = _mm512_broadcastd_epi32(_mm_loadu_si32(rows[r] + kk));
      if constexpr (kFlip) av = _mm512_xor_si512(av, _mm512_set1_epi32(static_cast<int32_t>(0x80808080u)));
      Unroll<P>([&](auto q) OCTET_INLINE { acc[s][r][q] = _mm512_dpbusd_epi32(acc[s][r][q], av, wv[q]); });
    });
  };
  size_t kk = 0;
  for (; kk + 4 * S <= k; kk += 4 * S, w += 64 * S) {
    Unroll<S>([&](auto s) OCTET_INLINE { step(s, kk + 4 * s, w + 64 * s); });
  }
  for (; kk < k; kk += 4, w += 64) step(std::integral_constant<size_t, 0>{}, kk, w);
  Unroll<M>([&](auto r) OCTET_INLINE {
    Unroll<P>([&](auto q) OCTET_INLINE {
      __m512i sum = acc[0][r][q];
      Unroll<S - 1>([&](auto s) OCTET_INLINE { sum = _mm512_add_epi32(sum, acc[s + 1][r][q]); });
      _mm512_store_si512(tile + r * kNr + 16 * q, sum);
    });
  });
}

using DotFn = void (*)(const uint8_t*, size_t, size_t, const int8_t*, size_t, int32_t*, bool);

template <bool kFlip>
DotFn SelectDot(size_t rows, size_t panels) {
#define OCTET_DOT_ROW(m) {&Dot<m, 1, kFlip>, &Dot<m, 2, kFlip>, &Dot<m, 3, kFlip>}
  static constexpr DotFn kTable[kMr][kPanels] = {OCTET_DOT_ROW(1), OCTET_DOT_ROW(2), OCTET_DOT_ROW(3),
                                                  OCTET_DOT_ROW(4), OCTET_DOT_ROW(5), OCTET_DOT_ROW(6),
                                                  OCTET_DOT_ROW(7), OCTET_DOT_ROW(8)};
#undef OCTET_DOT_ROW
  return kTable[rows - 1][panels - 1];
}

template <bool kSignedA, QGemmStage kStage>
void Run(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t partial[kRowGroup * kNr];
  for (size_t j0 = 0; j0 < args.n; j0 += kNr) {
    const size_t cols = std::min(kNr, args.n - j0), panels = (cols + 15) / 16;
    const int8_t* w = args.w + (j0 / 16) * args.w_panel_stride;
    for (size_t g0 = 0; g0 < args.m; g0 += kRowGroup) {
      const size_t group_rows = std::min(kRowGroup, args.m - g0);
      for (size_t k0 = 0; k0 < args.k || k0 == 0; k0 += kKChunk) {
        const size_t kc = std::min(kKChunk, args.k - k0), kc4 = kc / 4 * 4;
        for (size_t r0 = 0; r0 < group_rows; r0 += kMr) {
          const size_t rows = std::min(kMr, group_rows - r0);
          const DotFn dot = SelectDot<kSignedA>(rows, panels);
          const uint8_t* a_rows = a + (g0 + r0) * args.a_stride + k0;
          int32_t* tile = partial + r0 * kNr;
          dot(a_rows, args.a_stride, kc4, w + k0 * 16, args.w_panel_stride, tile, k0 != 0);
          if (kc4 != kc) {
            // The last 1-3 k from a zero-padded copy, so A is never read past k (the packed W is zero there).
            uint8_t last[kMr][4] = {};
            for (size_t r = 0; r < rows; ++r) std::memcpy(last[r], a_rows + r * args.a_stride + kc4, kc - kc4);
            dot(&last[0][0], 4, 4, w + (k0 + kc4) * 16, args.w_panel_stride, tile, true);
          }
        }
      }
      avx512::Epilogue<kStage>(partial, kNr, group_rows, cols, kSignedA ? 128 : 0, *args.params, g0, j0, args.y,
                               args.y_stride);
    }
  }
}

}  // namespace

void qgemm_u8s8_s32_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFp32>(args);
}
void qgemm_u8s8_minmax_q31_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kQ31>(args);
}
void qgemm_u8s8_minmax_fbgemm_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFp32>(args);
}
void qgemm_s8s8_minmax_q31_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kQ31>(args);
}
void qgemm_s8s8_minmax_fbgemm_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_8x48c4__avx512vnni(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kF32>(args); }

}  // namespace octet
