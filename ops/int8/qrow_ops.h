// The row-wise int8 operators of transformers (ops/int8/int8_ops.h), both over the last axis:
//   QLayerNorm(x q, Scale f32, B f32 optional) -> y q: LayerNormalization with int32 statistics and a fixed-point
//     rsqrt (ops/reference/qlayernorm_reference.h). Scale and B are constants with one element per position of the
//     last axis. Attributes: axis (-1 or rank - 1), epsilon (default 1e-5).
//   QSoftmax(x q) -> y q: Softmax with exp by a 256-entry table (ops/reference/qsoftmax_reference.h). Attribute
//     axis (-1 or rank - 1; opset 13 semantics).
// The kernels run the references' row functions (no SIMD variant yet), rows split across threads: every ISA and
// thread count gives the reference's integers.
#pragma once

#include "core/op_registry.h"

namespace octet::int8_ops {

Status RegisterQRowOps(OpRegistry& registry);

}  // namespace octet::int8_ops
