// QLookup's functions and table (the formulas are in the header).
#include "ops/reference/qlookup_reference.h"

#include <algorithm>
#include <cmath>

#include "core/float_op_table.h"
#include "ops/reference/quantize_reference.h"

namespace octet::reference {

Result<LookupFunction> ParseLookupFunction(std::string_view name, std::string_view approximate) {
  if (IsFloatOp(name, FloatOp::kGelu)) {
    if (approximate == "none") return LookupFunction::kGelu;
    if (approximate == "tanh") return LookupFunction::kGeluTanh;
    return InvalidArgument("attribute approximate must be \"none\" or \"tanh\", got \"{}\"", approximate);
  }
  if (approximate != "none") {
    return InvalidArgument("attribute approximate belongs to Gelu only; function \"{}\" got \"{}\"", name, approximate);
  }
  if (IsFloatOp(name, FloatOp::kHardSwish)) return LookupFunction::kHardSwish;
  if (IsFloatOp(name, FloatOp::kSigmoid)) return LookupFunction::kSigmoid;
  if (IsFloatOp(name, FloatOp::kTanh)) return LookupFunction::kTanh;
  if (IsFloatOp(name, FloatOp::kHardSigmoid)) return LookupFunction::kHardSigmoid;
  if (IsFloatOp(name, FloatOp::kLeakyRelu)) return LookupFunction::kLeakyRelu;
  return InvalidArgument("function must be HardSwish, Sigmoid, Tanh, HardSigmoid, LeakyRelu or Gelu, got \"{}\"", name);
}

std::string_view LookupFunctionName(LookupFunction f) {
  switch (f) {
    case LookupFunction::kHardSwish: return FloatOpName(FloatOp::kHardSwish);
    case LookupFunction::kSigmoid: return FloatOpName(FloatOp::kSigmoid);
    case LookupFunction::kTanh: return FloatOpName(FloatOp::kTanh);
    case LookupFunction::kHardSigmoid: return FloatOpName(FloatOp::kHardSigmoid);
    case LookupFunction::kLeakyRelu: return FloatOpName(FloatOp::kLeakyRelu);
    case LookupFunction::kGelu: return FloatOpName(FloatOp::kGelu);
    case LookupFunction::kGeluTanh: return "GeluTanh";
  }
  return "?";
}

float ApplyLookupFunction(LookupFunction f, float alpha, float beta, float x) {
  switch (f) {
    case LookupFunction::kHardSwish: return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case LookupFunction::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case LookupFunction::kTanh: return std::tanh(x);
    case LookupFunction::kHardSigmoid: return std::max(0.0f, std::min(1.0f, alpha * x + beta));
    case LookupFunction::kLeakyRelu: return x >= 0.0f ? x : alpha * x;
    case LookupFunction::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case LookupFunction::kGeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  }
  return x;
}

std::array<int32_t, 256> BuildLookupTable(const QLookupParams& p) {
  std::array<int32_t, 256> table{};
  const float inv_y_scale = 1.0f / p.y_scale;
  for (int byte = 0; byte < 256; ++byte) {
    const int32_t code = p.x_dtype == DType::kU8 ? byte : static_cast<int8_t>(static_cast<uint8_t>(byte));
    const float x = DequantizeValue<int32_t>(code, p.x_scale, p.x_zp);
    const float y = ApplyLookupFunction(p.function, p.alpha, p.beta, x);
    table[static_cast<size_t>(byte)] = QuantizeValue<int32_t>(y, inv_y_scale, p.y_zp, p.y_quant_min, p.y_quant_max);
  }
  return table;
}

}  // namespace octet::reference
