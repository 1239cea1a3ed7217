// Gemm (Y = alpha op(A) op(B) + beta C) and MatMul (numpy matmul with batch broadcasting) backward through the
// sgemm family: dA = dY op(B)^T, dB = op(A)^T dY (transposed to the operands' stored layouts), dC = beta dY summed
// over its broadcast dimensions; MatMul sums the gradients of broadcast batch operands.
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterGemmBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
