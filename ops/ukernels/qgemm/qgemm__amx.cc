// AMX qgemm kernels, register tile 32x32c4: 2 x 2 AMX tiles of 16 x 16 int32 accumulators.
//
// Tiles (one configuration per call, all 16 rows x 64 bytes): tmm0-3 accumulators C[2][2], tmm4-5 A (16 rows of A
// by 64 k, loaded straight from A with its row stride), tmm6-7 B (16 k groups x 16 columns x 4 k: one 1 KiB block
// of a kQGemmLayoutX86 panel, contiguous because that layout pads K to 64). Per 64 k: 2 A loads, 2 B loads, 4
// tdpbusd (u8 x s8) or tdpbssd (s8 x s8: s8 activations need no offset), each 16 x 16 x 64 multiply-adds into
// int32 with wrap-around. Rows of A beyond m and k beyond K are never read: a partial A tile (an M tail, or the last
// 64 k when K is not a multiple of 64) is first copied into a zeroed 1 KiB buffer on the stack. The accumulators
// go to an L1-resident 32 x 32 tile and the AVX-512 output stage (avx512_epilogue.h) stores y. The Linux AMX
// permission is requested once by core/cpu_features.cc; without it the amx ISA is not detected and never enabled.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/avx512_epilogue.h"

namespace octet {
namespace {

constexpr size_t kMr = 32;
constexpr size_t kNr = 32;

struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

void ConfigureTiles() {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  _tile_loadconfig(&cfg);
}

// A 16 x 64 block of A from row `row0` and column `k0`: straight from A when whole, else via `buffer` (zero padded).
inline const uint8_t* ABlock(const uint8_t* a, size_t a_stride, size_t rows, size_t k, size_t row0, size_t k0,
                             uint8_t* buffer, size_t* stride) {
  const size_t r = std::min<size_t>(16, rows - row0), c = std::min<size_t>(64, k - k0);
  if (r == 16 && c == 64) {
    *stride = a_stride;
    return a + row0 * a_stride + k0;
  }
  std::memset(buffer, 0, 16 * 64);
  for (size_t i = 0; i < r; ++i) std::memcpy(buffer + i * 64, a + (row0 + i) * a_stride + k0, c);
  *stride = 64;
  return buffer;
}

// tmm<c> += tmm<a> * tmm<b>, u8 x s8 (tdpbusd) or s8 x s8 (tdpbssd). A macro: the intrinsics take literal tile
// numbers.
#define OCTET_AMX_DP(c, a, b)  \
  do {                         \
    if constexpr (kSignedA) {  \
      _tile_dpbssd(c, a, b);   \
    } else {                   \
      _tile_dpbusd(c, a, b);   \
    }                          \
  } while (0)

// tile[32 x 32] = sum over k of A[rows x k] * W[cols x k] for a register tile of 17-32 rows at a / w: all 8 tile
// registers (C 2 x 2, A 2, B 2).
template <bool kSignedA>
void DotTwoRows(const uint8_t* a, size_t a_stride, size_t rows, size_t k, const int8_t* w, size_t panel_stride,
                size_t cols, int32_t* tile) {
  alignas(64) uint8_t buffer0[16 * 64];
  alignas(64) uint8_t buffer1[16 * 64];
  const bool two_panels = cols > 16;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const size_t blocks = (k + 63) / 64;
  for (size_t kb = 0; kb < blocks; ++kb) {
    size_t s0 = 0, s1 = 0;
    const uint8_t* a0 = ABlock(a, a_stride, rows, k, 0, kb * 64, buffer0, &s0);
    _tile_loadd(4, a0, static_cast<long>(s0));
    _tile_loadd(6, w + kb * 1024, 64);
    if (two_panels) _tile_loadd(7, w + panel_stride + kb * 1024, 64);
    OCTET_AMX_DP(0, 4, 6);
    if (two_panels) OCTET_AMX_DP(1, 4, 7);
    const uint8_t* a1 = ABlock(a, a_stride, rows, k, 16, kb * 64, buffer1, &s1);
    _tile_loadd(5, a1, static_cast<long>(s1));
    OCTET_AMX_DP(2, 5, 6);
    if (two_panels) OCTET_AMX_DP(3, 5, 7);
  }
  _tile_stored(0, tile, kNr * 4);
  _tile_stored(1, tile + 16, kNr * 4);
  _tile_stored(2, tile + 16 * kNr, kNr * 4);
  _tile_stored(3, tile + 16 * kNr + 16, kNr * 4);
}

// The same for at most 16 rows, where 4 tile registers are free: C 1 x 2 (tmm0-1) with A and B double-buffered
// (tmm4, 6, 7 for even k blocks, tmm5, 2, 3 for odd ones), so the loads of one k block need not wait for the
// multiplies of the previous one to release their registers (tile registers are not renamed). This is the case of
// small M, where every W byte feeds a single multiply and the loads are the bottleneck.
template <bool kSignedA>
void DotOneRow(const uint8_t* a, size_t a_stride, size_t rows, size_t k, const int8_t* w, size_t panel_stride,
               size_t cols, int32_t* tile) {
  alignas(64) uint8_t buffer0[16 * 64];
  alignas(64) uint8_t buffer1[16 * 64];
  const bool two_panels = cols > 16;
  _tile_zero(0);
  _tile_zero(1);
  const size_t blocks = (k + 63) / 64;
  for (size_t kb = 0; kb < blocks; kb += 2) {
    size_t s0 = 0, s1 = 0;
    const uint8_t* a0 = ABlock(a, a_stride, rows, k, 0, kb * 64, buffer0, &s0);
    _tile_loadd(4, a0, static_cast<long>(s0));
    _tile_loadd(6, w + kb * 1024, 64);
    if (two_panels) _tile_loadd(7, w + panel_stride + kb * 1024, 64);
    OCTET_AMX_DP(0, 4, 6);
    if (two_panels) OCTET_AMX_DP(1, 4, 7);
    if (kb + 1 == blocks) break;
    const uint8_t* a1 = ABlock(a, a_stride, rows, k, 0, (kb + 1) * 64, buffer1, &s1);
    _tile_loadd(5, a1, static_cast<long>(s1));
    _tile_loadd(2, w + (kb + 1) * 1024, 64);
    if (two_panels) _tile_loadd(3, w + panel_stride + (kb + 1) * 1024, 64);
    OCTET_AMX_DP(0, 5, 2);
    if (two_panels) OCTET_AMX_DP(1, 5, 3);
  }
  _tile_stored(0, tile, kNr * 4);
  _tile_stored(1, tile + 16, kNr * 4);
}

#undef OCTET_AMX_DP

template <bool kSignedA>
void Dot(const uint8_t* a, size_t a_stride, size_t rows, size_t k, const int8_t* w, size_t panel_stride, size_t cols,
         int32_t* tile) {
  if (rows > 16) {
    DotTwoRows<kSignedA>(a, a_stride, rows, k, w, panel_stride, cols, tile);
  } else {
    DotOneRow<kSignedA>(a, a_stride, rows, k, w, panel_stride, cols, tile);
  }
}

template <bool kSignedA, QGemmStage kStage>
void Run(const QGemmUkernelArgs& args) {
  OCTET_DCHECK(args.layout == kQGemmLayoutX86);
  OCTET_DCHECK(args.params->stage.stage == kStage);
  const auto* a = static_cast<const uint8_t*>(args.a);
  // Software pipelining: the output stage of tile t - 1 (AVX-512) is issued after the tile multiplies of tile t, so
  // the out-of-order core runs it while the AMX unit works; two tile buffers alternate.
  alignas(64) int32_t tiles[2][kMr * kNr];
  struct Pending {
    size_t i0, rows, j0, cols;
  };
  Pending pending{};
  bool has_pending = false;
  int buffer = 0;
  ConfigureTiles();
  QGemmForEachTile<kMr, kNr>(args.m, args.n, [&](size_t i0, size_t rows, size_t j0, size_t cols) {
    Dot<kSignedA>(a + i0 * args.a_stride, args.a_stride, rows, args.k, args.w + (j0 / 16) * args.w_panel_stride,
                  args.w_panel_stride, cols, tiles[buffer]);
    if (has_pending) {
      avx512::Epilogue<kStage>(tiles[buffer ^ 1], kNr, pending.rows, pending.cols, 0, *args.params, pending.i0,
                               pending.j0, args.y, args.y_stride);
    }
    pending = {i0, rows, j0, cols};
    has_pending = true;
    buffer ^= 1;
  });
  if (has_pending) {
    avx512::Epilogue<kStage>(tiles[buffer ^ 1], kNr, pending.rows, pending.cols, 0, *args.params, pending.i0,
                             pending.j0, args.y, args.y_stride);
  }
  _tile_release();
}

}  // namespace

void qgemm_u8s8_s32_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kFp32>(args); }
void qgemm_u8s8_minmax_q31_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kQ31>(args); }
void qgemm_u8s8_minmax_fbgemm_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) {
  Run<false, QGemmStage::kFbgemm>(args);
}
void qgemm_u8s8_f32_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<false, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kFp32>(args); }
void qgemm_s8s8_minmax_q31_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) {
  Run<true, QGemmStage::kFbgemm>(args);
}
void qgemm_s8s8_f32_ukernel_32x32c4__amx(const QGemmUkernelArgs& args) { Run<true, QGemmStage::kF32>(args); }

}  // namespace octet
