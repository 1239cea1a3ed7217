// AVX-VNNI qgemm kernels (VEX-encoded vpdpbusd on ymm), register tile 6x16c4: 6 rows of A by one panel of 16
// columns.
//
// Layout kQGemmLayoutX86: a packed row of a panel is 16 columns x 4 k = 64 bytes, two ymm operands. Per k group of
// 4: 2 ymm loads of W, then for each of the 6 rows one vpbroadcastd of 4 bytes of A and 2 vpdpbusd into 12 ymm
// accumulators (u8 x s8 -> int32, wrapping): 15 of the 16 ymm registers. s8 activations are fed as u8 (xor 0x80)
// and corrected by 128 * col_sums in the epilogue. A K tail of 1-3 bytes goes through a zero-padded copy (no
// over-read of A).
// Row counts below 6 at the block edge are separate instantiations. Cache blocking inside a call: per panel, rows go
// in groups of 48 and K in chunks of 1024, so the W chunk (16 KiB), the rows of one tile and the group's int32
// partial sums (3 KiB) stay in L1; then the output stage (avx2_epilogue.h) runs 8 columns at a time.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/avx2_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kMr = 6;
constexpr size_t kNr = 16;
constexpr size_t kRowGroup = 48;  // rows whose partial sums stay in L1
constexpr size_t kKChunk = 1024;  // k per pass, a multiple of 4

// tile[r][c] (+)= sum_k a'[r][k] * w[c][k] for r < M and k a multiple of 4 (accumulated into when `accumulate`).
// Rows are addressed as base + one shared offset. With 1 or 2 rows there are too few accumulator chains to cover
// vpdpbusd's latency, so the k groups are dealt round-robin to S accumulator sets, summed at the end (int32 addition
// wraps mod 2^32: same result in any order), as in the AVX-512 kernel.
template <int M, bool kFlip>
void Dot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, int32_t* tile, bool accumulate) {
  constexpr int S = M == 1 ? 4 : (M == 2 ? 2 : 1);
  __m256i acc[S][M][2];
  const uint8_t* rows[M];
  Unroll<M>([&](auto r) OCTET_INLINE {
    rows[r] = a + r * a_stride;
    const auto* t = reinterpret_cast<const __m256i*>(tile + r * kNr);
    acc[0][r][0] = accumulate ? _mm256_load_si256(t) : _mm256_setzero_si256();
    acc[0][r][1] = accumulate ? _mm256_load_si256(t + 1) : _mm256_setzero_si256();
    Unroll<S - 1>([&](auto s) OCTET_INLINE { acc[s + 1][r][0] = acc[s + 1][r][1] = _mm256_setzero_si256(); });
  });
  auto step = [&](auto s, size_t kk, const int8_t* wg) OCTET_INLINE {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 32));
    Unroll<M>([&](auto r) OCTET_INLINE {
      __m256i av = _mm256_broadcastd_epi32(_mm_loadu_si32(rows[r] + kk));  // vpbroadcastd ymm, m32: a load only
      if constexpr (kFlip) av = _mm256_xor_si256(av, _mm256_set1_epi32(static_cast<int32_t>(0x80808080u)));
      acc[s][r][0] = _mm256_dpbusd_avx_epi32(acc[s][r][0], av, w0);
      acc[s][r][1] = _mm256_dpbusd_avx_epi32(acc[s][r][1], av, w1);
    });
  };
  size_t kk = 0;
  for (; kk + 4 * S <= k; kk += 4 * S, w += 64 * S) {
    Unroll<S>([&](auto s) OCTET_INLINE { step(s, kk + 4 * s, w + 64 * s); });
  }
  for (; kk < k; kk += 4, w += 64) step(std::integral_constant<size_t, 0>{}, kk, w);
  Unroll<M>([&](auto r) OCTET_INLINE {
    __m256i lo = acc[0][r][0], hi = acc[0][r][1];
    Unroll<S - 1>([&](auto s) OCTET_INLINE {
      lo = _mm256_add_epi32(lo, acc[s + 1][r][0]);
      hi = _mm256_add_epi32(hi, acc[s + 1][r][1]);
    });
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kNr + 8), hi);
  });
}

using DotFn = void (*)(const uint8_t*, size_t, size_t, const int8_t*, int32_t*, bool);

template <bool kFlip>
DotFn SelectDot(size_t rows) {
  static constexpr DotFn kTable[kMr] = {&Dot<1, kFlip>, &Dot<2, kFlip>, &Dot<3, kFlip>,
                                        &Dot<4, kFlip>, &Dot<5, kFlip>, &Dot<6, kFlip>};
  return kTable[rows - 1];
}

template <bool kSignedA, QGemmStage kStage>
void Run(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t partial[kRowGroup * kNr];
  for (size_t j0 = 0; j0 < args.n; j0 += kNr) {
    const size_t cols = std::min(kNr, args.n - j0);
    const int8_t* w = args.w + (j0 / 16) * args.w_panel_stride;
    for (size_t g0 = 0; g0 < args.m; g0 += kRowGroup) {
      const size_t group_rows = std::min(kRowGroup, args.m - g0);
      for (size_t k0 = 0; k0 < args.k || k0 == 0; k0 += kKChunk) {
        const size_t kc = std::min(kKChunk, args.k - k0);
        const size_t kc4 = kc / 4 * 4;
        for (size_t r0 = 0; r0 < group_rows; r0 += kMr) {
          const size_t rows = std::min(kMr, group_rows - r0);
          const DotFn dot = SelectDot<kSignedA>(rows);
          const uint8_t* a_rows = a + (g0 + r0) * args.a_stride + k0;
          int32_t* tile = partial + r0 * kNr;
          dot(a_rows, args.a_stride, kc4, w + k0 * 16, tile, k0 != 0);
          if (kc4 != kc) {
            // The last 1-3 k from a zero-padded copy, so A is never read past k (the packed W is zero there).
            uint8_t last[kMr][4] = {};
            for (size_t r = 0; r < rows; ++r) std::memcpy(last[r], a_rows + r * args.a_stride + kc4, kc - kc4);
            dot(&last[0][0], 4, 4, w + (k0 + kc4) * 16, tile, true);
          }
        }
      }
      avx2::Epilogue<kStage>(partial, kNr, group_rows, cols, kSignedA ? 128 : 0, *args.params, g0, j0, args.y,
                             args.y_stride);
    }
  }
}

}  // namespace

void qgemm_u8s8_s32_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFp32>(args);
}
void qgemm_u8s8_minmax_q31_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kQ31>(args); }
void qgemm_u8s8_minmax_fbgemm_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFp32>(args);
}
void qgemm_s8s8_minmax_q31_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_6x16c4__avxvnni(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kF32>(args); }

}  // namespace octet
