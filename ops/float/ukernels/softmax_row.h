// The float softmax-row kernel family: y = softmax(x) over one contiguous row of n >= 1 floats (max, exp(x - max),
// sum, times 1 / sum), for Softmax along its innermost axis (attention scores). The operator picks the kernel once,
// at Prepare (ops/float/softmax.cc). The scalar kernel is the operator's own loop (std::exp, a sequential sum); SIMD
// kernels use xsimd's vector exp and a lane-wise sum: not bit-exact against it, tested with a tolerance.
#pragma once

#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet::float_ops {

using SoftmaxRowFn = void (*)(const float* x, float* y, int64_t n);

#define OCTET_SOFTMAX_ROW_UKERNEL(isa, fn) void fn(const float* x, float* y, int64_t n);
#include "ops/float/ukernels/softmax_row.inc"
#undef OCTET_SOFTMAX_ROW_UKERNEL

// Candidates, best first, scalar last.
std::span<const UkernelEntry<SoftmaxRowFn>> SoftmaxRowUkernels();

}  // namespace octet::float_ops
