// Integer clamp bounds of the int8 operators' fused activations (see fused_activation_reference.h).
#include "ops/reference/fused_activation_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/float_op_table.h"
#include "ops/reference/quantize_reference.h"

namespace octet::reference {

int32_t ClampBoundCode(float bound, float scale, int32_t zero_point, int32_t quant_min, int32_t quant_max) {
  return QuantizeValue<int32_t>(bound, 1.0f / scale, zero_point, quant_min, quant_max);
}

Result<ActivationBounds> FusedActivationBounds(const AttributeMap& attributes, float scale, int32_t zero_point,
                                               int32_t quant_min, int32_t quant_max) {
  OCTET_ASSIGN_OR_RETURN(const std::string activation, attributes.GetString("activation", ""));
  if (activation.empty()) return ActivationBounds{quant_min, quant_max};
  if (activation == FloatOpName(FloatOp::kRelu)) return ActivationBounds{std::max(zero_point, quant_min), quant_max};
  if (activation != FloatOpName(FloatOp::kClip)) {
    return InvalidArgument("attribute activation must be \"\", \"Relu\" or \"Clip\", got \"{}\"", activation);
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  OCTET_ASSIGN_OR_RETURN(const float min, attributes.GetFloat(kActivationMinAttribute, -kInf));
  OCTET_ASSIGN_OR_RETURN(const float max, attributes.GetFloat(kActivationMaxAttribute, kInf));
  if (std::isnan(min) || std::isnan(max) || min > max) {
    return InvalidArgument("attributes '{}' and '{}' of activation \"Clip\" must be ordered real values, got {} and {}",
                           kActivationMinAttribute, kActivationMaxAttribute, min, max);
  }
  return ActivationBounds{ClampBoundCode(min, scale, zero_point, quant_min, quant_max),
                          ClampBoundCode(max, scale, zero_point, quant_min, quant_max)};
}

}  // namespace octet::reference
