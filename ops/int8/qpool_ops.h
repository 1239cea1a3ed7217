// QMaxPool, QAveragePool, QGlobalMaxPool, QGlobalAveragePool (ops/int8/int8_ops.h): ONNX pooling on u8 / s8 NCHW
// (1-D and 2-D), with the arithmetic of ops/reference/qpool_reference.h. The max pools need y's qparams equal to x's.
#pragma once

#include "core/op_registry.h"

namespace octet::int8_ops {

Status RegisterQPoolOps(OpRegistry& registry);

}  // namespace octet::int8_ops
