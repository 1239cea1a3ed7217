// The registry for graphs that come out of the quantization passes: the float operators (kept-float nodes), the
// fused float operators (quant/fused_ops.h) and the int8 operators (ops/int8/int8_ops.h). Loading and running a
// converted graph or a .octet file uses this one.
#pragma once

#include "core/op_registry.h"

namespace octet {

OpRegistry QuantizedGraphRegistry();

}  // namespace octet
