// The QBatchMatMul packing kernel family: one batch's B operand (K x N activation codes, u8 or s8, row-major)
// packed straight into a qgemm weight layout, codes shifted into s8, with the column sums: what
// reference::BatchMatMulWeights followed by QGemmPackWeights gives (the spec), in one pass and without the
// intermediate N x K copy. QBatchMatMul runs it once per batch per call, so its cost is paid at every call.
//
// Contract (ops/reference/qbatchmatmul_reference.h):
//   w[j][k] = int8(b[k * b_stride + j] - shift)   (mod 256: the caller has checked every code lies in B's quant
//                                                  range, where the shifted code fits s8 and needs no clamp)
//   packed, col_sums = QGemmPackWeights(layout, n, k, w)     (zeros in the padding, col_sums for PaddedN(n) columns)
// A kernel serves one layout (kQGemmLayoutAny: any, the scalar one). Any n, k and alignment; reads no byte of b
// outside its K x N block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/dtype.h"
#include "core/ukernel_list.h"
#include "ops/ukernels/qgemm.h"

namespace octet {

using QBmmPackUkernelFn = void (*)(const QGemmLayout& layout, const uint8_t* b, size_t b_stride, size_t k, size_t n,
                                   uint8_t shift, int8_t* packed, int32_t* col_sums);

#define OCTET_QBMM_PACK_UKERNEL(isa, layout, fn)                                                               \
  void fn(const QGemmLayout& layout_arg, const uint8_t* b, size_t b_stride, size_t k, size_t n, uint8_t shift, \
          int8_t* packed, int32_t* col_sums);
#include "ops/ukernels/qbmm_pack.inc"
#undef OCTET_QBMM_PACK_UKERNEL

struct QBmmPackUkernelEntry {
  Isa isa;
  const char* name;
  QBmmPackUkernelFn fn;
  QGemmLayout layout;  // kQGemmLayoutAny: every layout
};

// Every packing kernel, best first, scalar last.
std::span<const QBmmPackUkernelEntry> QBmmPackUkernels();
// The first kernel the context enables that serves `layout`.
const QBmmPackUkernelEntry& SelectQBmmPackUkernel(const Context& context, const QGemmLayout& layout);

}  // namespace octet
