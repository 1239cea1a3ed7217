// The byte lookup kernel family: y[i] = table[x[i]] over a 256-entry table, for QLookup (GELU, sigmoid, ...) and
// for QAdd / QMul with a single-element operand, whose result is then a function of the other operand's code.
//
// Contract (spec: reference::LookupBytes, ops/reference/qlookup_reference.h): y[i] = table[x[i]] for i < n; reads
// 256 table bytes and n bytes of x, writes n bytes of y and no other; x and y are equal or do not overlap; any n
// and alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet {

using LutUkernelFn = void (*)(const uint8_t* table, const uint8_t* x, size_t n, uint8_t* y);

#define OCTET_LUT_UKERNEL(isa, fn) void fn(const uint8_t* table, const uint8_t* x, size_t n, uint8_t* y);
#include "ops/ukernels/lut.inc"
#undef OCTET_LUT_UKERNEL

std::span<const UkernelEntry<LutUkernelFn>> LutUkernels();

}  // namespace octet
