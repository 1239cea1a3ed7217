// NEON dot-product qgemm kernels (sdot, s8 x s8 -> int32), register tile 4x16c4: 4 rows of A by one panel of 16
// columns.
//
// Layout kQGemmLayoutN16K4: a packed row of a panel is 16 columns x 4 k = 64 bytes, four q registers of 4 columns.
// Per 16 k: one 16-byte load of A per row (four k groups, one per 32-bit lane), 16 q loads of W, and 64 sdot by
// element (vdotq_laneq_s32) into 16 q accumulators; 4 rows x 4 column vectors + 4 A + 4 W = 24 registers. A K tail
// goes one k group at a time, the last partial group from a zero-padded copy (no over-read of A). u8 activations are
// fed as s8 (xor 0x80 = -128) and corrected by 128 * col_sums in the epilogue (neon_epilogue.h).
#include <arm_neon.h>

#include <cstring>

#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/neon_epilogue.h"
#include "ops/ukernels/qgemm/unroll.h"

namespace octet {
namespace {

constexpr size_t kMr = 4;
constexpr size_t kNr = 16;

// sdot by element: acc[c] += the 4 bytes of w's column c times the 4 bytes of lane kLane of a.
template <int kLane>
__attribute__((always_inline)) inline int32x4_t Sdot(int32x4_t acc, int8x16_t w, int8x16_t a) {
  return vdotq_laneq_s32(acc, w, a, kLane);
}

template <int M, bool kFlip>
void Dot(const uint8_t* a, size_t a_stride, size_t k, const int8_t* w, int32_t* tile) {
  int32x4_t acc[M][4];
  const uint8_t* rows[M];
  Unroll<M>([&](auto r) OCTET_INLINE {
    rows[r] = a + r * a_stride;
    Unroll<4>([&](auto q) OCTET_INLINE { acc[r][q] = vdupq_n_s32(0); });
  });
  const uint8x16_t flip = vdupq_n_u8(0x80);
  auto load_a = [&](const uint8_t* p) OCTET_INLINE {
    const uint8x16_t v = vld1q_u8(p);
    return vreinterpretq_s8_u8(kFlip ? veorq_u8(v, flip) : v);
  };
  const size_t blocks = k / 16;
  for (size_t b = 0; b < blocks; ++b) {
    int8x16_t av[M];
    Unroll<M>([&](auto r) OCTET_INLINE {
      av[r] = load_a(rows[r]);
      rows[r] += 16;
    });
    Unroll<4>([&](auto g) OCTET_INLINE {
      int8x16_t wv[4];
      Unroll<4>([&](auto q) OCTET_INLINE { wv[q] = vld1q_s8(w + g * 64 + 16 * q); });
      Unroll<M>([&](auto r) OCTET_INLINE {
        Unroll<4>([&](auto q) OCTET_INLINE { acc[r][q] = Sdot<decltype(g)::value>(acc[r][q], wv[q], av[r]); });
      });
    });
    w += 4 * 64;
  }
  // The remaining 1-15 k: one group of 4 at a time from a zero-padded copy of each row's tail.
  const size_t rest = k - 16 * blocks;
  if (rest != 0) {
    uint8_t last[M][16];
    int8x16_t av[M];
    Unroll<M>([&](auto r) OCTET_INLINE {
      std::memset(last[r], 0, 16);
      std::memcpy(last[r], rows[r], rest);
      av[r] = load_a(last[r]);
    });
    const size_t groups = (rest + 3) / 4;
    Unroll<4>([&](auto g) OCTET_INLINE {
      if (g < groups) {
        int8x16_t wv[4];
        Unroll<4>([&](auto q) OCTET_INLINE { wv[q] = vld1q_s8(w + g * 64 + 16 * q); });
        Unroll<M>([&](auto r) OCTET_INLINE {
          Unroll<4>([&](auto q) OCTET_INLINE { acc[r][q] = Sdot<decltype(g)::value>(acc[r][q], wv[q], av[r]); });
        });
      }
    });
  }
  Unroll<M>([&](auto r) OCTET_INLINE {
    Unroll<4>([&](auto q) OCTET_INLINE { vst1q_s32(tile + r * kNr + 4 * q, acc[r][q]); });
  });
}

using DotFn = void (*)(const uint8_t*, size_t, size_t, const int8_t*, int32_t*);

template <bool kSignedA, QGemmStage kStage>
void Run(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutN16K4);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  constexpr bool kFlip = !kSignedA;
  static constexpr DotFn kTable[kMr] = {&Dot<1, kFlip>, &Dot<2, kFlip>, &Dot<3, kFlip>, &Dot<4, kFlip>};
  const auto* a = static_cast<const uint8_t*>(args.a);
  alignas(64) int32_t tile[kMr * kNr];
  QGemmForEachTile<kMr, kNr>(args.m, args.n, [&](size_t i0, size_t rows, size_t j0, size_t cols) {
    kTable[rows - 1](a + i0 * args.a_stride, args.a_stride, args.k, args.w + (j0 / 16) * args.w_panel_stride, tile);
    neon::Epilogue<kStage>(tile, kNr, rows, cols, kSignedA ? 0 : -128, *args.params, i0, j0, args.y, args.y_stride);
  });
}

}  // namespace

void qgemm_u8s8_s32_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFp32>(args);
}
void qgemm_u8s8_minmax_q31_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kQ31>(args); }
void qgemm_u8s8_minmax_fbgemm_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFp32>(args);
}
void qgemm_s8s8_minmax_q31_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_4x16c4__neondot(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kF32>(args); }

}  // namespace octet
