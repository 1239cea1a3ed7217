// NEON qgemm kernels without the dot product (ARMv8.0: smull + sadalp), register tile 2x16c4: 2 rows of A by one
// panel of 16 columns.
//
// Layout kQGemmLayoutN16K4: a packed row of a panel is 16 columns x 4 k. Per k group of 4 and row: the 4 bytes of A
// repeated to 8 (a0 a1 a2 a3 a0 a1 a2 a3), smull / smull2 against 2 columns x 4 k of W at a time (s8 x s8 -> 8 int16
// products, |product| <= 2^14, exact), and sadalp adds neighbouring products into 4 int32 lanes (2 columns x 2
// partial sums) of 8 accumulators per row; 16 accumulators + 4 W registers. The partial sums are folded with addp at
// the end. u8 activations are fed as s8 (xor 0x80 = -128) and corrected by 128 * col_sums in the epilogue
// (neon_epilogue.h). The last partial k group reads A from a zero-padded copy (no over-read of A).
#include <arm_neon.h>

#include <cstring>

#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/neon_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kMr = 2;
constexpr size_t kNr = 16;

template <int M, bool kFlip>
void Dot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, int32_t* tile) {
  int32x4_t acc[M][8];
  const uint8_t* rows[M];
  uint8_t last[M][4];
  Unroll<M>([&](auto r) OCTET_INLINE {
    rows[r] = a + r * a_stride;
    Unroll<8>([&](auto q) OCTET_INLINE { acc[r][q] = vdupq_n_s32(0); });
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
    int8x16_t wv[4];
    Unroll<4>([&](auto q) OCTET_INLINE { wv[q] = vld1q_s8(w + g * 64 + 16 * q); });
    Unroll<M>([&](auto r) OCTET_INLINE {
      uint32_t a4;
      std::memcpy(&a4, rows[r], 4);
      rows[r] += 4;
      if constexpr (kFlip) a4 ^= 0x80808080u;
      const int8x8_t av = vreinterpret_s8_u32(vdup_n_u32(a4));
      const int8x16_t av2 = vcombine_s8(av, av);
      Unroll<4>([&](auto q) OCTET_INLINE {
        acc[r][2 * q] = vpadalq_s16(acc[r][2 * q], vmull_s8(vget_low_s8(wv[q]), av));
        acc[r][2 * q + 1] = vpadalq_s16(acc[r][2 * q + 1], vmull_high_s8(wv[q], av2));
      });
    });
  }
  // acc[r][2q] holds columns 4q, 4q+1 and acc[r][2q+1] columns 4q+2, 4q+3, two partial sums each: addp folds them.
  Unroll<M>([&](auto r) OCTET_INLINE {
    Unroll<4>([&](auto q) OCTET_INLINE {
      vst1q_s32(tile + r * kNr + 4 * q, vpaddq_s32(acc[r][2 * q], acc[r][2 * q + 1]));
    });
  });
}

using DotFn = void (*)(const uint8_t*, size_t, size_t, const int8_t*, int32_t*);

template <bool kSignedA, QGemmStage kStage>
void Run(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutN16K4);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  constexpr bool kFlip = !kSignedA;
  static constexpr DotFn kTable[kMr] = {&Dot<1, kFlip>, &Dot<2, kFlip>};
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t tile[kMr * kNr];
  QGemmForEachTile<kMr, kNr>(args.m, args.n, [&](size_t i0, size_t rows, size_t j0, size_t cols) {
    kTable[rows - 1](a + i0 * args.a_stride, args.a_stride, args.k, args.w + (j0 / 16) * args.w_panel_stride, tile);
    neon::Epilogue<kStage>(tile, kNr, rows, cols, kSignedA ? 0 : -128, *args.params, i0, j0, args.y, args.y_stride);
  });
}

}  // namespace

void qgemm_u8s8_s32_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kFp32>(args); }
void qgemm_u8s8_minmax_q31_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kQ31>(args); }
void qgemm_u8s8_minmax_fbgemm_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kFp32>(args); }
void qgemm_s8s8_minmax_q31_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_2x16c4__neon(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kF32>(args); }

}  // namespace octet
