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

#include "ops/ukernels/qgemm/avx2_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"
#include "ops/ukernels/qigemm.h"

namespace octet {
namespace {

constexpr size_t kIgemmMr = 3, kIgemmNr = 24;
constexpr size_t kIgemmMaddMr = 4, kIgemmMaddNr = 16;

// ---- vpmaddubsw, 4x16 ----
template <bool kFlip>
void MaddDot(const void* const* pointers, size_t taps, size_t c, size_t a_offset, const int8_t* w, int32_t* tile) {
  __m256i acc[kIgemmMaddMr][2];
  Unroll<kIgemmMaddMr>([&](auto r) OCTET_INLINE { acc[r][0] = acc[r][1] = _mm256_setzero_si256(); });
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t t = 0; t < taps; ++t) {
    const uint8_t* rows[kIgemmMaddMr];
    Unroll<kIgemmMaddMr>([&](auto r)
                        OCTET_INLINE { rows[r] = static_cast<const uint8_t*>(pointers[t * kIgemmMaddMr + r]) + a_offset; });
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

template <bool kSignedA, QGemmStage kStage>
void RunMaddubs(const QIgemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.mr == kIgemmMaddMr);
  OCTET_DCHECK(args.c % 4 == 0);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  alignas(64) int32_t tile[kIgemmMaddMr * kIgemmMaddNr];
  for (size_t j0 = 0; j0 < args.n; j0 += kIgemmMaddNr) {
    const size_t cols = std::min(args.n - j0, kIgemmMaddNr);
    const int8_t* panel = args.w + (j0 / kIgemmMaddNr) * args.w_panel_stride;
    for (size_t i0 = 0; i0 < args.m; i0 += kIgemmMaddMr) {
      const size_t rows = std::min(args.m - i0, kIgemmMaddMr);
      MaddDot<kSignedA>(args.indirection + (i0 / kIgemmMaddMr) * args.taps * kIgemmMaddMr, args.taps, args.c, args.a_offset,
                        panel, tile);
      avx2::Epilogue<kStage>(tile, kIgemmMaddNr, rows, cols, kSignedA ? 128 : 0, *args.params, i0, j0, args.y,
                             args.y_stride);
    }
  }
}

// ---- vpmaddwd over int16 weights, 3x24 ----

// An empty asm that needs v in a register, so the compiler keeps each accumulator's sum in order (see qgemm's
// 3x24c2 kernel, whose register plan this follows).
__attribute__((always_inline)) inline void Pin(__m256i& v) { __asm__("" : "+x"(v)); }

// The dot products of one tile of 3 pixels with one 24-column panel over every tap, into tile (3 x 24 int32).
template <bool kFlip>
void Dot(const void* const* pointers, size_t taps, size_t c, size_t a_offset, const int8_t* w_bytes, int32_t* tile) {
  const auto* w = reinterpret_cast<const __m256i*>(w_bytes);
  __m256i acc[kIgemmMr][3];
  Unroll<kIgemmMr>([&](auto r)
                  OCTET_INLINE { Unroll<3>([&](auto q) OCTET_INLINE { acc[r][q] = _mm256_setzero_si256(); }); });
  const __m256i pair01 = _mm256_set1_epi32(static_cast<int32_t>(0x80018000u));
  const __m256i pair23 = _mm256_set1_epi32(static_cast<int32_t>(0x80038002u));
  for (size_t t = 0; t < taps; ++t) {
    const uint8_t* rows[kIgemmMr];
    Unroll<kIgemmMr>([&](auto r) OCTET_INLINE { rows[r] = static_cast<const uint8_t*>(pointers[t * kIgemmMr + r]) + a_offset; });
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
    Unroll<3>([&](auto q)
                  OCTET_INLINE { _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * kIgemmNr + 8 * q), acc[r][q]); });
  });
}

template <bool kSignedA, QGemmStage kStage>
void Run(const QIgemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86Wide);
  OCTET_DCHECK(args.mr == kIgemmMr);
  OCTET_DCHECK(args.c % 4 == 0);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  alignas(64) int32_t tile[kIgemmMr * kIgemmNr];
  for (size_t j0 = 0; j0 < args.n; j0 += kIgemmNr) {
    const size_t cols = std::min(args.n - j0, kIgemmNr);
    const int8_t* panel = args.w + (j0 / kIgemmNr) * args.w_panel_stride;
    for (size_t i0 = 0; i0 < args.m; i0 += kIgemmMr) {
      const size_t rows = std::min(args.m - i0, kIgemmMr);
      Dot<kSignedA>(args.indirection + (i0 / kIgemmMr) * args.taps * kIgemmMr, args.taps, args.c, args.a_offset, panel, tile);
      avx2::Epilogue<kStage>(tile, kIgemmNr, rows, cols, kSignedA ? 128 : 0, *args.params, i0, j0, args.y, args.y_stride);
    }
  }
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
