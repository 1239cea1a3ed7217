// AVX2 qigemm kernels (no VNNI): qgemm's AVX2 kernels with A read through the indirection buffer. c is a multiple
// of 4, so each tap is whole k groups and the packed weights are walked linearly over every tap; the accumulators
// stay in registers across taps. A partial last tile computes the buffer's repeated pixels and stores only the valid
// rows. s8 activations are fed as u8 (xor 0x80) and corrected by 128 * col_sums in qgemm's epilogue
// (avx2_epilogue.h).
//
// 4x16c4_maddubs: kQGemmLayoutX86 (16 columns x 4 k per 64-byte row); per group of 4 k, 2 ymm of W and per row a
//   vpbroadcastd of A, vpmaddubsw, vpmaddwd by ones, vpaddd. Only where no pair sum can saturate int16
//   (QGemmRequirement::kPairSumsFitInt16: 7-bit activations, or weights within [-64, 64]).
// 3x24c2: exact. kQGemmLayoutX86Wide (int16, 24 columns x a pair of k per 96-byte row); per pair, 3 ymm of W and
//   per row one vpbroadcastd of 4 A bytes, a vpshufb that zero-extends the pair into every dword, 3 vpmaddwd +
//   vpaddd; |a0 w0 + a1 w1| <= 2 * 255 * 128 fits int32. 9 ymm accumulators.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/ukernels/qgemm/avx2_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"
#include "ops/ukernels/qigemm.h"

namespace octet {
namespace {

constexpr size_t kIgemmMr = 3, kIgemmNr = 24;
constexpr size_t kIgemmMaddMr = 4, kIgemmMaddNr = 16;

// ---- vpmaddubsw, 4x16 ----
// Adds the dot products of one tile of 4 pixels with a 16-column panel over taps [t0, t1) (w at tap t0's slice) to
// tile (4 x 16 int32). pointers: the tile's block of the indirection buffer (taps x 4 entries).
template <bool kFlip>
void MaddDot(const void* const* pointers, size_t t0, size_t t1, size_t c, size_t a_offset, const int8_t* w,
             int32_t* tile) {
  __m256i acc[kIgemmMaddMr][2];
  Unroll<kIgemmMaddMr>([&](auto r) OCTET_INLINE {
    acc[r][0] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + r * kIgemmMaddNr));
    acc[r][1] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + r * kIgemmMaddNr + 8));
  });
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t t = t0; t < t1; ++t) {
    const uint8_t* rows[kIgemmMaddMr];
    Unroll<kIgemmMaddMr>(
        [&](auto r) OCTET_INLINE { rows[r] = static_cast<const uint8_t*>(pointers[t * kIgemmMaddMr + r]) + a_offset; });
    for (size_t g = 0; g < c / 4; ++g) {
      const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
      w += 64;
      Unroll<kIgemmMaddMr>([&](auto r) OCTET_INLINE {
        __m256i av = _mm256_broadcastd_epi32(_mm_loadu_si32(rows[r]));
        rows[r] += 4;
        if constexpr (kFlip) av = _mm256_xor_si256(av, _mm256_set1_epi32(static_cast<int32_t>(0x80808080u)));
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w0), ones));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w1), ones));
      });
    }
  }
  Unroll<kIgemmMaddMr>([&](auto r) OCTET_INLINE {
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kIgemmMaddNr), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kIgemmMaddNr + 8), acc[r][1]);
  });
}

// A chunk's slice of a panel is at most kChunkBytes (whole taps, at least one), so it stays in L1 (32-48 KiB) next to
// the tiles' A rows; a group of at most kGroupTiles tiles passes over each chunk.
constexpr size_t kChunkBytes = size_t{16} << 10, kWholePanelBytes = size_t{24} << 10;
constexpr size_t kGroupTiles = 16;

using ChunkDotFn = void (*)(const void* const*, size_t, size_t, size_t, size_t, const int8_t*, int32_t*);

// The tiles of args in groups: per panel and group, the sums start at zero, every chunk of taps adds to them tile by
// tile, then the group's rows go through the epilogue. The int32 sums wrap the same in any order, so the result does
// not depend on the chunks. tap_bytes: one tap's slice of a panel (c * NR * bytes per weight).
template <size_t MR, size_t NR, bool kSignedA, QGemmStage kStage>
void RunChunked(const QIgemmUkernelArgs& args, size_t tap_bytes, ChunkDotFn dot) {
  alignas(64) int32_t sums[kGroupTiles * MR * NR];
  // Panels up to kWholePanelBytes go in one chunk; larger ones in balanced chunks of at most kChunkBytes (at least a
  // tap), so no chunk is a sliver.
  const size_t max_taps =
      args.taps * tap_bytes <= kWholePanelBytes ? args.taps : std::max<size_t>(1, kChunkBytes / tap_bytes);
  const size_t chunks = (args.taps + max_taps - 1) / max_taps;
  const size_t chunk_taps = (args.taps + chunks - 1) / chunks;
  for (size_t j0 = 0; j0 < args.n; j0 += NR) {
    const size_t cols = std::min(args.n - j0, NR);
    const int8_t* panel = args.w + (j0 / NR) * args.w_panel_stride;
    for (size_t g0 = 0; g0 < args.m; g0 += kGroupTiles * MR) {
      const size_t group_rows = std::min(args.m - g0, kGroupTiles * MR), tiles = (group_rows + MR - 1) / MR;
      std::memset(sums, 0, tiles * MR * NR * sizeof(int32_t));
      for (size_t t0 = 0; t0 < args.taps; t0 += chunk_taps) {
        const size_t t1 = std::min(args.taps, t0 + chunk_taps);
        // With panels large enough to be chunked (K of 2304 and more: megabytes of weights, from L3 once per call),
        // the next chunk of weights (this panel's, else the next panel's first when this group is its last) is
        // prefetched a share per tile while this chunk is computed: ResNet-18 layer4 3x3 10-20% faster. The next
        // panel may lie past this call's columns (few-pixel layers give each call one panel; the next call takes the
        // next one) or past the weights: a prefetch never faults, and the address is formed as an integer. Smaller
        // panels skip it: their weights stay in L2, and one tile per call (many-pixel layers) would issue a whole
        // panel of prefetches per tile (10% slower).
        uintptr_t next = 0;
        size_t next_bytes = 0;
        if (chunks > 1 && t1 < args.taps) {
          next = reinterpret_cast<uintptr_t>(panel + t1 * tap_bytes);
          next_bytes = (std::min(args.taps, t1 + chunk_taps) - t1) * tap_bytes;
        } else if (chunks > 1 && g0 + group_rows == args.m) {
          next = reinterpret_cast<uintptr_t>(panel) + args.w_panel_stride;
          next_bytes = std::min(args.taps, chunk_taps) * tap_bytes;
        }
        const size_t lines = (next_bytes + 63) / 64, per_tile = (lines + tiles - 1) / tiles;
        for (size_t tile = 0; tile < tiles; ++tile) {
          for (size_t l = tile * per_tile; l < std::min(lines, (tile + 1) * per_tile); ++l) {
            _mm_prefetch(reinterpret_cast<const char*>(next + l * 64), _MM_HINT_T0);
          }
          dot(args.indirection + (g0 / MR + tile) * args.taps * MR, t0, t1, args.c, args.a_offset,
              panel + t0 * tap_bytes, sums + tile * MR * NR);
        }
      }
      avx2::Epilogue<kStage>(sums, NR, group_rows, cols, kSignedA ? 128 : 0, *args.params, g0, j0, args.y,
                             args.y_stride);
    }
  }
}

template <bool kSignedA, QGemmStage kStage>
void RunMaddubs(const QIgemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.mr == kIgemmMaddMr);
  OCTET_DCHECK(args.c % 4 == 0);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  RunChunked<kIgemmMaddMr, kIgemmMaddNr, kSignedA, kStage>(args, args.c * kIgemmMaddNr, &MaddDot<kSignedA>);
}

// ---- vpmaddwd over int16 weights, 3x24 ----

// An empty asm that needs v in a register, so the compiler keeps each accumulator's sum in order (see qgemm's
// 3x24c2 kernel, whose register plan this follows).
__attribute__((always_inline)) inline void Pin(__m256i& v) { __asm__("" : "+x"(v)); }

// Adds the dot products of one tile of 3 pixels with one 24-column panel over taps [t0, t1) (w_bytes at tap t0's
// slice) to tile (3 x 24 int32).
template <bool kFlip>
void Dot(const void* const* pointers, size_t t0, size_t t1, size_t c, size_t a_offset, const int8_t* w_bytes,
         int32_t* tile) {
  const auto* w = reinterpret_cast<const __m256i*>(w_bytes);
  __m256i acc[kIgemmMr][3];
  Unroll<kIgemmMr>([&](auto r) OCTET_INLINE {
    Unroll<3>([&](auto q) OCTET_INLINE {
      acc[r][q] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + r * kIgemmNr + 8 * q));
    });
  });
  const __m256i pair01 = _mm256_set1_epi32(static_cast<int32_t>(0x80018000u));
  const __m256i pair23 = _mm256_set1_epi32(static_cast<int32_t>(0x80038002u));
  for (size_t t = t0; t < t1; ++t) {
    const uint8_t* rows[kIgemmMr];
    Unroll<kIgemmMr>(
        [&](auto r) OCTET_INLINE { rows[r] = static_cast<const uint8_t*>(pointers[t * kIgemmMr + r]) + a_offset; });
    for (size_t g = 0; g < c / 4; ++g) {
      Unroll<2>([&](auto half) OCTET_INLINE {
        __m256i wv[3];
        Unroll<3>([&](auto q) OCTET_INLINE { wv[q] = _mm256_loadu_si256(w + half * 3 + q); });
        Unroll<kIgemmMr>([&](auto r) OCTET_INLINE {
          __m256i av = _mm256_broadcastd_epi32(_mm_loadu_si32(rows[r]));
          if constexpr (kFlip) av = _mm256_xor_si256(av, _mm256_set1_epi32(static_cast<int32_t>(0x80808080u)));
          av = _mm256_shuffle_epi8(av, half == 0 ? pair01 : pair23);
          Unroll<3>([&](auto q)
                        OCTET_INLINE { acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(av, wv[q])); });
        });
        Unroll<kIgemmMr>([&](auto r) OCTET_INLINE { Unroll<3>([&](auto q) OCTET_INLINE { Pin(acc[r][q]); }); });
        if constexpr (half == 0) __asm__ volatile("" ::: "memory");
      });
      w += 6;
      Unroll<kIgemmMr>([&](auto r) OCTET_INLINE { rows[r] += 4; });
    }
  }
  Unroll<kIgemmMr>([&](auto r) OCTET_INLINE {
    Unroll<3>([&](auto q) OCTET_INLINE {
      _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kIgemmNr + 8 * q), acc[r][q]);
    });
  });
}

template <bool kSignedA, QGemmStage kStage>
void Run(const QIgemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86Wide);
  OCTET_DCHECK(args.mr == kIgemmMr);
  OCTET_DCHECK(args.c % 4 == 0);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  RunChunked<kIgemmMr, kIgemmNr, kSignedA, kStage>(args, args.c * kIgemmNr * 2, &Dot<kSignedA>);
}

}  // namespace

void qigemm_u8s8_s32_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kS32>(args);
}
void qigemm_u8s8_minmax_fp32_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kFp32>(args);
}
void qigemm_u8s8_minmax_q31_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kQ31>(args);
}
void qigemm_u8s8_minmax_fbgemm_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kFbgemm>(args);
}
void qigemm_u8s8_f32_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<false, QGemmStage::kF32>(args);
}
void qigemm_s8s8_s32_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kS32>(args);
}
void qigemm_s8s8_minmax_fp32_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kFp32>(args);
}
void qigemm_s8s8_minmax_q31_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kQ31>(args);
}
void qigemm_s8s8_minmax_fbgemm_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kFbgemm>(args);
}
void qigemm_s8s8_f32_ukernel_4x16c4_maddubs__avx2(const QIgemmUkernelArgs& args) {
  RunMaddubs<true, QGemmStage::kF32>(args);
}
void qigemm_u8s8_s32_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) { Run<false, QGemmStage::kS32>(args); }
void qigemm_u8s8_minmax_fp32_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) {
  Run<false, QGemmStage::kFp32>(args);
}
void qigemm_u8s8_minmax_q31_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) { Run<false, QGemmStage::kQ31>(args); }
void qigemm_u8s8_minmax_fbgemm_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) {
  Run<false, QGemmStage::kFbgemm>(args);
}
void qigemm_u8s8_f32_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) { Run<false, QGemmStage::kF32>(args); }
void qigemm_s8s8_s32_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) { Run<true, QGemmStage::kS32>(args); }
void qigemm_s8s8_minmax_fp32_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) { Run<true, QGemmStage::kFp32>(args); }
void qigemm_s8s8_minmax_q31_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) { Run<true, QGemmStage::kQ31>(args); }
void qigemm_s8s8_minmax_fbgemm_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) {
  Run<true, QGemmStage::kFbgemm>(args);
}
void qigemm_s8s8_f32_ukernel_3x24c2__avx2(const QIgemmUkernelArgs& args) { Run<true, QGemmStage::kF32>(args); }

}  // namespace octet
