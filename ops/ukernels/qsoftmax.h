// The QSoftmax u8 -> u8 row kernel family (what the presets give attention's probabilities).
//
// Contract (spec: reference::QSoftmaxRow, ops/reference/qsoftmax_reference.h): y = QSoftmaxRow(params, n, x) bit
// for bit, for any n >= 1 up to 2^24; reads n bytes of x, writes n bytes of y.
#pragma once

#include <cstdint>
#include <span>

#include "core/ukernel_list.h"
#include "ops/reference/qsoftmax_reference.h"

namespace octet {

using QSoftmaxU8UkernelFn = void (*)(const reference::QSoftmaxParams& params, int64_t n, const uint8_t* x, uint8_t* y);

#define OCTET_QSOFTMAX_UKERNEL(isa, fn) \
  void fn(const reference::QSoftmaxParams& params, int64_t n, const uint8_t* x, uint8_t* y);
#include "ops/ukernels/qsoftmax.inc"
#undef OCTET_QSOFTMAX_UKERNEL

std::span<const UkernelEntry<QSoftmaxU8UkernelFn>> QSoftmaxU8Ukernels();

}  // namespace octet
