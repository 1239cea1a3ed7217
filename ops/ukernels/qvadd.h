// The qvadd kernel family: QAdd of two same-length u8 / s8 vectors in the fp32 scheme, over contiguous elements.
//
// Contract (spec: ops/reference/qelementwise_reference.h, QAddFp32Value):
//   y[i] = clamp(rne(f32(a[i] - a_zp) * a_mult + f32(b[i] - b_zp) * b_mult) + y_zp, lo, hi)
// with each product and the sum rounded to float32 (no FMA). No over-read; y may alias a or b exactly.
// Preconditions (MakeQAddFp32Params checks them): multipliers finite, in (0, 2^24); lo <= hi inside T's range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ukernel_list.h"
#include "ops/reference/qelementwise_reference.h"

namespace octet {

using QVAddParams = reference::QAddFp32Params;

template <typename T>
using QVAddUkernelFn = void (*)(size_t n, const T* a, const T* b, T* y, const QVAddParams& params);

#define OCTET_QVADD_UKERNEL(isa, type, fn) void fn(size_t n, const type* a, const type* b, type* y, const QVAddParams& params);
#include "ops/ukernels/qvadd.inc"
#undef OCTET_QVADD_UKERNEL

template <typename T>
std::span<const UkernelEntry<QVAddUkernelFn<T>>> QVAddUkernels();

}  // namespace octet
