// The qgemm kernel family: int8 GEMM over a block of the output, A (u8 or s8 activations, row-major) times packed
// s8 weights, with a fused output stage. Spec: ops/reference/qgemm_reference.h; operator: ops/qgemm.h.
//
// Kernel names follow <op>_<dtypes>_<fusion>_<requant>_ukernel_<MR>x<NR>c<KR>[_<variant>]__<isa>:
//   qgemm_u8s8_s32_ukernel_8x48c4__avx512vnni            int32 out (accumulator + int32 bias)
//   qgemm_u8s8_minmax_fp32_ukernel_8x48c4__avx512vnni    8-bit out, fp32 requantization, clamp [lo, hi]
//   qgemm_u8s8_minmax_q31_ukernel_...                    8-bit out, TFLite fixed point
//   qgemm_u8s8_minmax_fbgemm_ukernel_...                 8-bit out, float bias added in float (FBGEMM)
//   qgemm_u8s8_f32_ukernel_...                           float out (dynamic quantization)
// <dtypes> is activation then weight dtype; the 8-bit stages write u8 or s8 (QGemmStageParams::signed_output).
// MR x NR is the register tile, c<KR> the k group of the packed layout. The scalar kernels carry no tile: they
// read any layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "ops/reference/qgemm_reference.h"

namespace octet {

using reference::QGemmStage;
using reference::QGemmStageParams;

// Packed weight layout. W (N x K, row j = output channel j) is cut into panels of `nr` columns, N padded with zero
// columns to a multiple of nr; K is padded with zeros to a multiple of `k_align` (itself a multiple of kr). In a
// panel, `kr` consecutive k of one column are contiguous, then the next column of the panel:
//   element (j, k) of panel p = j / nr is at  p * panel_stride + (k / kr) * (nr * kr) + (j % nr) * kr + k % kr,
//   panel_stride = k_padded * nr  (elements; bytes are elements * w_bytes).
// kr = 4 puts 16 columns x 4 k in one 64-byte row: a zmm operand of vpdpbusd, two ymm, four NEON q registers, or
// one row of an AMX B tile (which is why x86 pads K to 64: whole 16 x 64 tiles). kr = 8 pairs columns for smmla.
// w_bytes = 2: the s8 values pre-widened to int16 (little endian) for AVX2's exact vpmaddwd kernel, whose layout
// puts 24 columns x 2 k in a 96-byte row: three ymm operands, one int32 column sum per dword.
struct QGemmLayout {
  uint32_t nr = 0;  // 0: "any layout" (the scalar kernels)
  uint32_t kr = 0;
  uint32_t k_align = 0;
  uint32_t w_bytes = 1;  // 1: s8 elements, 2: int16
  bool operator==(const QGemmLayout&) const = default;
  size_t PaddedK(size_t k) const { return (k + k_align - 1) / k_align * k_align; }
  size_t PaddedN(size_t n) const { return (n + nr - 1) / nr * nr; }
  size_t PanelStride(size_t k) const { return PaddedK(k) * nr * w_bytes; }  // bytes
  size_t PackedBytes(size_t n, size_t k) const { return PaddedN(n) * PaddedK(k) * w_bytes; }
};
inline constexpr QGemmLayout kQGemmLayoutAny{0, 0, 0};
inline constexpr QGemmLayout kQGemmLayoutX86{16, 4, 64};        // every x86 kernel, AMX included
inline constexpr QGemmLayout kQGemmLayoutX86Wide{24, 2, 4, 2};  // AVX2's exact int16 kernel (K in groups of 4)
inline constexpr QGemmLayout kQGemmLayoutN16K4{16, 4, 4};       // neon, neondot
inline constexpr QGemmLayout kQGemmLayoutN16K8{16, 8, 8};       // i8mm
// The layout the scalar-only fallback packs for on this architecture.
#if defined(__x86_64__)
inline constexpr QGemmLayout kQGemmDefaultLayout = kQGemmLayoutX86;
#else
inline constexpr QGemmLayout kQGemmDefaultLayout = kQGemmLayoutN16K4;
#endif
std::string QGemmLayoutName(const QGemmLayout& layout);  // "n16k4a64", "n24k2a4s16" (int16), or "any"

// Packs W (n x k, row stride w_stride) into `packed` (layout.PackedBytes(n, k) bytes, 2-byte aligned for an int16
// layout), padding with zeros, and
// writes col_sums[j] = sum_k w[j][k] for j < PaddedN(n) (0 in the padding).
void QGemmPackWeights(const QGemmLayout& layout, size_t n, size_t k, const int8_t* w, size_t w_stride,
                      int8_t* packed, int32_t* col_sums);

// Per-call parameters of a kernel. Per-column arrays start at the block's first column and are readable for
// PaddedN(n) entries (kernels load whole vectors of columns); per-row arrays have m entries.
struct QGemmUkernelParams {
  // col_offsets[j] = bias_s32[j] - a_zp * col_sums[j] + k * a_zp * w_zp[j], computed mod 2^32 (QGemmColumnOffset):
  // the zero-point compensation and the int32 bias of the kS32 / kFp32 / kQ31 stages.
  const int32_t* col_offsets = nullptr;
  // sum_k w[j][k] (QGemmPackWeights), for kernels that offset A internally (s8 -> u8 for vpdpbusd, u8 -> s8 for
  // sdot) and correct by offset * col_sums[j].
  const int32_t* col_sums = nullptr;
  // Affine weights: w_zp[j] and row_sums[i] = sum_k a[i][k]; both nullptr when every w_zp is 0.
  const int32_t* w_zero_points = nullptr;
  const int32_t* row_sums = nullptr;
  // The output stage; its bias_s32 is ignored (already in col_offsets).
  QGemmStageParams stage;
};

// One call computes an m x n block of the output over the full K:
//   acc[i][j] = sum_k a[i][k] * w[j][k] + col_offsets[j] - w_zp[j] * row_sums[i]       (int32, wrapping)
//   y[i * y_stride + j] = stage(acc[i][j])
// which equals the reference whenever the operator's bounds hold (the exact result fits int32, so arithmetic mod
// 2^32 gives it). a: m rows of k bytes (u8 or s8 per the kernel), a_stride bytes apart; kernels never read past
// a[i][k - 1]. w: the block's first panel in `layout`, panels w_panel_stride bytes apart, readable for whole
// panels. y: int32_t, float, uint8_t or int8_t per the stage, y_stride elements apart. No allocation, no threads.
struct QGemmUkernelArgs {
  size_t m = 0;
  size_t n = 0;
  size_t k = 0;
  const void* a = nullptr;
  size_t a_stride = 0;
  const int8_t* w = nullptr;
  size_t w_panel_stride = 0;
  QGemmLayout layout;
  void* y = nullptr;
  size_t y_stride = 0;
  const QGemmUkernelParams* params = nullptr;
};
using QGemmUkernelFn = void (*)(const QGemmUkernelArgs& args);

// col_offsets[j] as defined above, in int64 and wrapped to int32 (two's complement).
inline int32_t QGemmColumnOffset(int32_t bias, int32_t a_zp, int32_t col_sum, int64_t k, int32_t w_zp) {
  const int64_t v = int64_t{bias} - int64_t{a_zp} * col_sum + k * int64_t{a_zp} * w_zp;
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// When a kernel may be chosen, beyond its ISA and layout.
enum class QGemmRequirement : uint8_t {
  kNone,
  // vpmaddubsw adds two u8 x s8 products in saturating int16: only when no pair can reach beyond int16, given the
  // actual ranges of A (as the kernel sees it: s8 + 128) and W (DESIGN.md §4).
  kPairSumsFitInt16,
};

struct QGemmUkernelEntry {
  Isa isa;
  const char* name;
  QGemmUkernelFn fn;
  DType a_dtype;  // u8 or s8
  QGemmStage stage;
  uint32_t mr;          // register tile rows (1 for scalar)
  uint32_t nr;          // register tile columns
  QGemmLayout layout;   // kQGemmLayoutAny for the scalar kernels
  QGemmRequirement requirement;
  uint32_t min_m;       // preferred only for M >= min_m (a faster kernel for small M follows in the list)
};

#define OCTET_QGEMM_UKERNEL(isa, a_dtype, stage, mr, nr, layout, requirement, min_m, fn) \
  void fn(const QGemmUkernelArgs& args);
#include "ops/ukernels/qgemm.inc"
#undef OCTET_QGEMM_UKERNEL

// Every qgemm kernel, best first within each (activation dtype, stage), scalar last.
std::span<const QGemmUkernelEntry> QGemmUkernels();

// What a call needs from a kernel.
struct QGemmQuery {
  DType a_dtype = DType::kU8;
  QGemmStage stage = QGemmStage::kS32;
  QGemmLayout layout;      // the packed weights' layout
  QGemmLayout alt_layout;  // a second packing of the same weights (nr 0: none), see SelectQGemmLayouts
  size_t m = 0;
  // The ranges of the weights (from prepack) and of A (computed on demand, only when a candidate needs it).
  int32_t w_min = -128;
  int32_t w_max = 127;
  std::function<std::pair<int32_t, int32_t>()> a_range;
};

// Whether `entry` serves `query` on `context`; if not and `why` is set, the reason.
bool QGemmUkernelSupports(const Context& context, const QGemmUkernelEntry& entry, const QGemmQuery& query,
                          std::string* why = nullptr);
// The first supporting candidate of the list (a scalar kernel always supports).
const QGemmUkernelEntry& SelectQGemmUkernel(const Context& context, const QGemmQuery& query);
// One line per candidate of the query's dtype and stage: chosen, or why skipped (oneDNN verbose style).
std::vector<std::string> ExplainQGemmSelection(const Context& context, const QGemmQuery& query);
// The layout prepack uses: that of the first kernel for `a_dtype` whose ISA the context enables and that has a
// layout of its own, else kQGemmDefaultLayout.
QGemmLayout SelectQGemmLayout(const Context& context, DType a_dtype);
// The layouts prepack packs for weights with values in [w_min, w_max]: the first one (SelectQGemmLayout), then those
// of the following candidates until one that is chosen whatever the call (no minimum M, no requirement that could
// fail for these weights and any activations of the dtype). On AVX2 without VNNI, full-range weights get the s8
// layout of the vpmaddubsw kernel (chosen per call when the activations' range allows) and the int16 layout of the
// exact kernel; weights within [-64, 64] only the first. At most two layouts.
std::vector<QGemmLayout> SelectQGemmLayouts(const Context& context, DType a_dtype, int32_t w_min, int32_t w_max);

// Loops over the MR x NR register tiles of an m x n block, columns outer (a panel group stays in cache while the
// row tiles pass), rows inner: fn(i0, rows, j0, cols). The order is the same in every kernel.
template <size_t MR, size_t NR, typename Fn>
inline void QGemmForEachTile(size_t m, size_t n, Fn&& fn) {
  for (size_t j0 = 0; j0 < n; j0 += NR) {
    const size_t cols = n - j0 < NR ? n - j0 : NR;
    for (size_t i0 = 0; i0 < m; i0 += MR) fn(i0, m - i0 < MR ? m - i0 : MR, j0, cols);
  }
}

}  // namespace octet
