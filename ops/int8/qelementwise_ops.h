// QAdd and QMul (ops/int8/int8_ops.h): u8 / s8 per-tensor inputs with their own qparams, numpy broadcasting, the
// output's qparams, an optional fused Relu; requantization "fp32" (default) or "q31" as specified in
// ops/reference/qelementwise_reference.h. Same-shape (and same-layout) runs of QAdd in the fp32 scheme go through
// the qvadd kernel family (ops/ukernels/qvadd.h); everything else evaluates the reference's per-element functions
// along the broadcast walk.
#pragma once

#include "core/op_registry.h"

namespace octet::int8_ops {

Status RegisterQElementwiseOps(OpRegistry& registry);

}  // namespace octet::int8_ops
