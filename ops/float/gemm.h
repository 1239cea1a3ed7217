// Gemm (Y = alpha * op(A) op(B) + beta * C, C broadcast to [M, N]) and MatMul (numpy matmul: 1-D operands
// promoted and the added dimension removed, batch dimensions broadcast) on f32, through Sgemm.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterGemmOps(OpRegistry& registry);

}  // namespace octet::float_ops
