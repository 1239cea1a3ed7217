// QBatchMatMul(a q, b q) -> y q (ops/int8/int8_ops.h): MatMul of two int8 activations, such as attention's Q x K^T
// and P x V, on the qgemm kernels. There is no weight to prepack at Prepare: each call packs every batch's B as
// qgemm weights (u8 codes shifted to s8, ops/reference/qbatchmatmul_reference.h) and runs one QGemmPlan over A's
// rows; per-tensor qparams, fp32 requantization, numpy broadcasting of the batch dims. Equal to
// reference::QBatchMatMul on every ISA and thread count (the qgemm kernels equal their reference).
#pragma once

#include "core/op_registry.h"

namespace octet::int8_ops {

Status RegisterQBatchMatMulOp(OpRegistry& registry);

}  // namespace octet::int8_ops
