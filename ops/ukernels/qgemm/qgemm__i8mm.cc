// Int8 matrix-multiply (i8mm) qgemm kernels, register tile 4x16c8: 2 pairs of rows of A by 8 pairs of columns.
//
// Layout kQGemmLayoutN16K8: per k group of 8 a panel holds 16 columns x 8 k, each pair of columns 16 contiguous
// bytes (column 2p, then 2p+1): exactly the B operand of smmla / usmmla, which adds a 2 x 8 by 8 x 2 product into
// the 2 x 2 int32 block [r0c0 r0c1 r1c0 r1c1] of one q register. Per 8 k: 8 q loads of W, 2 A registers (8 bytes of
// two rows each), 16 multiply-accumulates into 16 q accumulators. u8 activations use usmmla (u8 x s8) and s8 smmla,
// so no offset is needed. An odd row count repeats the last row in the unused half (computed, never stored); the last
// partial k group reads A from a zero-padded copy (no over-read of A). Output stage: neon_epilogue.h.
#include <arm_neon.h>

#include <cstring>

#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/neon_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kMr = 4;
constexpr size_t kNr = 16;

template <int M, bool kSignedA>
void Dot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, int32_t* tile) {
  constexpr int kPairs = (M + 1) / 2;
  int32x4_t acc[kPairs][8];
  const uint8_t* rows[2 * kPairs];
  uint8_t last[2 * kPairs][8];
  Unroll<2 * kPairs>([&](auto r) OCTET_INLINE { rows[r] = a + (r < M ? r : M - 1) * a_stride; });
  Unroll<kPairs>([&](auto p) OCTET_INLINE {
    Unroll<8>([&](auto c) OCTET_INLINE { acc[p][c] = vdupq_n_s32(0); });
  });
  const size_t groups = (k + 7) / 8, tail = k % 8;
  for (size_t g = 0; g < groups; ++g) {
    if (tail != 0 && g + 1 == groups) {
      Unroll<2 * kPairs>([&](auto r) OCTET_INLINE {
        std::memset(last[r], 0, 8);
        std::memcpy(last[r], rows[r], tail);
        rows[r] = last[r];
      });
    }
    int8x16_t wv[8];
    Unroll<8>([&](auto c) OCTET_INLINE { wv[c] = vld1q_s8(w + g * 128 + 16 * c); });
    Unroll<kPairs>([&](auto p) OCTET_INLINE {
      const uint8x16_t av = vcombine_u8(vld1_u8(rows[2 * p]), vld1_u8(rows[2 * p + 1]));
      Unroll<8>([&](auto c) OCTET_INLINE {
        if constexpr (kSignedA) {
          acc[p][c] = vmmlaq_s32(acc[p][c], vreinterpretq_s8_u8(av), wv[c]);
        } else {
          acc[p][c] = vusmmlaq_s32(acc[p][c], av, wv[c]);
        }
      });
    });
    Unroll<2 * kPairs>([&](auto r) OCTET_INLINE { rows[r] += 8; });
  }
  Unroll<kPairs>([&](auto p) OCTET_INLINE {
    Unroll<8>([&](auto c) OCTET_INLINE {
      vst1_s32(tile + (2 * p) * kNr + 2 * c, vget_low_s32(acc[p][c]));
      vst1_s32(tile + (2 * p + 1) * kNr + 2 * c, vget_high_s32(acc[p][c]));
    });
  });
}

using DotFn = void (*)(const uint8_t*, size_t, size_t, const int8_t*, int32_t*);

template <bool kSignedA, QGemmStage kStage>
void Run(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutN16K8);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  static constexpr DotFn kTable[kMr] = {&Dot<1, kSignedA>, &Dot<2, kSignedA>, &Dot<3, kSignedA>, &Dot<4, kSignedA>};
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t tile[kMr * kNr];
  QGemmForEachTile<kMr, kNr>(args.m, args.n, [&](size_t i0, size_t rows, size_t j0, size_t cols) {
    kTable[rows - 1](a + i0 * args.a_stride, args.a_stride, args.k, args.w + (j0 / 16) * args.w_panel_stride, tile);
    neon::Epilogue<kStage>(tile, kNr, rows, cols, 0, *args.params, i0, j0, args.y, args.y_stride);
  });
}

}  // namespace

void qgemm_u8s8_s32_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kFp32>(args); }
void qgemm_u8s8_minmax_q31_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kQ31>(args); }
void qgemm_u8s8_minmax_fbgemm_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kFp32>(args); }
void qgemm_s8s8_minmax_q31_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_4x16c8__i8mm(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kF32>(args); }

}  // namespace octet
