// QLookup and QClamp (ops/int8/int8_ops.h).
//   QLookup(x q) -> y q: y = table[x], the 256-entry table of ops/reference/qlookup_reference.h built at Prepare from
//     x's and y's qparams (y may have another dtype than x). Attributes: function (required), alpha, beta (float).
//   QClamp(x q) -> y q: y = min(max(x, lo), hi) with y's qparams equal to x's. Attributes min and max are real
//     values (default -inf and +inf), turned into codes once with reference::QuantizeValue (rne, clamped to x's
//     range): Relu is min = 0 (lo = the zero point), Relu6 / Clip add max.
#pragma once

#include "core/op_registry.h"

namespace octet::int8_ops {

Status RegisterQUnaryOps(OpRegistry& registry);

}  // namespace octet::int8_ops
