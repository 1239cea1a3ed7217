// The float erf kernel family: y[i] = erf(x[i]) over a span, for the Erf operator (BERT-style encoders exported at
// opset 13 compute GELU as x * (1 + Erf(x / sqrt 2)) / 2). The operator picks the kernel once, at Prepare
// (ops/float/unary.cc). SIMD kernels use xsimd's vector erf: not bit-exact against std::erf, tested with a tolerance.
#pragma once

#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet::float_ops {

using ErfFn = void (*)(const float* x, float* y, int64_t n);

#define OCTET_ERF_UKERNEL(isa, fn) void fn(const float* x, float* y, int64_t n);
#include "ops/float/ukernels/erf.inc"
#undef OCTET_ERF_UKERNEL

// Candidates, best first, scalar last.
std::span<const UkernelEntry<ErfFn>> ErfUkernels();

}  // namespace octet::float_ops
