// The observer min/max kernel family: the running range of a float32 array and whether it holds NaN or ±Inf.
//
// Kernels are leaf functions (no allocation, threads or errors); minmax.inc lists them, best first, scalar last;
// minmax_dispatch.cc picks one per context. Every kernel gives the same result: min and max are exact whatever the
// order, and the non-finite flag does not depend on it either.
#pragma once

#include <cstddef>
#include <span>

#include "core/context.h"
#include "core/ukernel_list.h"

namespace octet {

struct MinMaxResult {
  float min;       // smallest element (unspecified when `nonfinite`)
  float max;       // largest element (unspecified when `nonfinite`)
  bool nonfinite;  // some element is NaN, +Inf or -Inf
};

// Reads x[0, n), n >= 1, no over-read.
using MinMaxUkernelFn = MinMaxResult (*)(size_t n, const float* x);

#define OCTET_MINMAX_UKERNEL(isa, fn) MinMaxResult fn(size_t n, const float* x);
#include "observers/kernels/minmax.inc"
#undef OCTET_MINMAX_UKERNEL

// Candidates for this build, best first, scalar last.
std::span<const UkernelEntry<MinMaxUkernelFn>> MinMaxUkernels();
// The kernel the context's ISAs select (recorded as family "minmax_f32").
const UkernelEntry<MinMaxUkernelFn>& SelectMinMaxUkernel(const Context& context);

}  // namespace octet
