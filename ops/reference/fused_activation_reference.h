// Scalar specification of the fused activations of the int8 operators (attribute "activation" of QConv, QGemm,
// QMatMul, QAdd, QMul; ops/int8/int8_ops.h): the integer clamp bounds [lo, hi] of the output that each one means.
// The operators, the test-vector replay and QClamp all take their bounds from here, so a QClamp fused into its
// producer (quant/fuse_int8_activation.h) clamps to the very same integers.
#pragma once

#include <cstdint>

#include "core/graph_attribute.h"
#include "core/status.h"

namespace octet::reference {

// Attribute names of a fused Clip's real bounds (absent: unbounded on that side).
inline constexpr char kActivationMinAttribute[] = "activation_min";
inline constexpr char kActivationMaxAttribute[] = "activation_max";

// The code of a real clamp bound under the output's qparams: QClamp's rule, QuantizeValue
// (clamp(rne(bound * f32(1 / scale)) + zero_point, quant_min, quant_max)); -Inf and +Inf give the range ends.
// Monotonic in `bound`, so max / min of bounds commute with it (what makes fusing clamps exact).
int32_t ClampBoundCode(float bound, float scale, int32_t zero_point, int32_t quant_min, int32_t quant_max);

struct ActivationBounds {
  int32_t lo = 0, hi = 0;
};

// The output clamp of a fused activation, for an output with the given per-tensor qparams:
//   activation ""     -> [quant_min, quant_max]
//   activation "Relu" -> [max(zero_point, quant_min), quant_max]
//   activation "Clip" -> [ClampBoundCode(activation_min), ClampBoundCode(activation_max)], each attribute a float
//                        that defaults to -Inf / +Inf (min <= max, neither NaN).
// Fails naming the attribute and value for any other activation or bad bounds.
Result<ActivationBounds> FusedActivationBounds(const AttributeMap& attributes, float scale, int32_t zero_point,
                                               int32_t quant_min, int32_t quant_max);

}  // namespace octet::reference
