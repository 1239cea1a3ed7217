// The QLayerNorm row kernel family: one row of D u8 codes to D u8 codes, the arithmetic of
// reference::QLayerNormRow (ops/reference/qlayernorm_reference.h) bit for bit: integer statistics, the exact
// fixed-point rsqrt, one float32 multiply then add per element, rne, clamp. Other dtype pairs run the reference.
#pragma once

#include <cstdint>
#include <span>

#include "core/ukernel_list.h"
#include "ops/reference/qlayernorm_reference.h"

namespace octet {

using QLayerNormU8UkernelFn = void (*)(const reference::QLayerNormParams& params, const uint8_t* x, uint8_t* y);

#define OCTET_QLAYERNORM_UKERNEL(isa, fn) \
  void fn(const reference::QLayerNormParams& params, const uint8_t* x, uint8_t* y);
#include "ops/ukernels/qlayernorm.inc"
#undef OCTET_QLAYERNORM_UKERNEL

std::span<const UkernelEntry<QLayerNormU8UkernelFn>> QLayerNormU8Ukernels();

}  // namespace octet
