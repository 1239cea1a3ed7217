// The qigemm kernel family: int8 convolution as an indirect GEMM (the design of QNNPACK's and XNNPACK's igemm).
// The weights are qgemm's packed panels over K = taps * c (tap-major, as OHWI rows are); A is not an im2col matrix
// but the input itself, read through an indirection buffer of one pointer per (output pixel, tap)
// (ops/reference/qconv2d_indirect_reference.h), so no activation byte is copied. Same output stages and column
// parameters as qgemm (QGemmUkernelParams; the x86 kernels share qgemm's epilogues). Spec: QConv2dIndirectAccumulate
// plus the column offsets, then QGemmApplyStage.
//
// Kernel names: qigemm_<dtypes>_<fusion>_<requant>_ukernel_<MR>x<NR>c<KR>__<isa>, as qgemm's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/dtype.h"
#include "core/isa.h"
#include "ops/ukernels/qgemm.h"

namespace octet {

// One call computes an m x n block of the output (m output pixels, n output channels):
//   acc[i][j] = sum_{t < taps, k < c} a_t,i[k] * w[j][t * c + k] + col_offsets[j] - w_zp[j] * row_sums[i]  (mod 2^32)
//   y[i * y_stride + j] = stage(acc[i][j])
// with a_t,i = (const TA*)indirection[((i / mr) * taps + t) * mr + i % mr] + a_offset: `indirection` starts at the
// block's first tile of mr pixels (the kernel's MR, or any mr for the scalar kernels), and m may end inside a tile
// whose remaining entries repeat a valid pixel (BuildConvIndirection does). Kernels read c bytes per pointer and
// never past them. w: the block's first panel in `layout` over K = taps * c, panels w_panel_stride bytes apart.
struct QIgemmUkernelArgs {
  size_t m = 0;
  size_t n = 0;
  size_t taps = 0;
  size_t c = 0;
  const void* const* indirection = nullptr;
  size_t mr = 1;
  size_t a_offset = 0;
  const int8_t* w = nullptr;
  size_t w_panel_stride = 0;
  QGemmLayout layout;
  void* y = nullptr;
  size_t y_stride = 0;
  const QGemmUkernelParams* params = nullptr;
};
using QIgemmUkernelFn = void (*)(const QIgemmUkernelArgs& args);

struct QIgemmUkernelEntry {
  Isa isa;
  const char* name;
  QIgemmUkernelFn fn;
  DType a_dtype;  // u8 or s8
  QGemmStage stage;
  uint32_t mr;                   // tile rows; the indirection buffer is built for it (1: scalar, any mr)
  uint32_t nr;                   // tile columns
  QGemmLayout layout;            // kQGemmLayoutAny for the scalar kernels
  QGemmRequirement requirement;  // as qgemm's (vpmaddubsw: the operand ranges must keep pair sums in int16)
  uint32_t c_multiple;           // c must be a multiple of it (a tap's K then starts on the layout's k group)
};

// Each SIMD kernel mirrors the qgemm kernel of the same name without the "i" (same tile, layout, arithmetic and
// epilogue): a convolution runs it where the GEMM would run that one, under the same requirement.

#define OCTET_QIGEMM_UKERNEL(isa, a_dtype, stage, mr, nr, layout, requirement, c_multiple, fn) \
  void fn(const QIgemmUkernelArgs& args);
#include "ops/ukernels/qigemm.inc"
#undef OCTET_QIGEMM_UKERNEL

// Every qigemm kernel, best first within each (activation dtype, stage), scalar last.
std::span<const QIgemmUkernelEntry> QIgemmUkernels();

}  // namespace octet
