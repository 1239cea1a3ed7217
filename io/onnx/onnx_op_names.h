// The ONNX operators the importer and exporter recognise by name although octet has no float operator of that name
// (core/float_op_table.h declares the ones it has): each is spelled here once, and io/onnx names it by constant.
// Also the op-type tests io/onnx makes on plain strings (op types of NodeProtos, fused-activation attributes).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "core/float_op_table.h"

namespace octet::onnx_names {

// Opsets 7 to 9 (Resize from 10 on): the opset adapter rewrites it into Resize.
inline constexpr std::string_view kUpsample = "Upsample";
// Opset 18 (scale and bias per group until opset 21): the opset adapter refuses the old form when it is registered.
inline constexpr std::string_view kGroupNormalization = "GroupNormalization";

// Whether the op type (or activation / function attribute) `name` is float operator `op`. IsFloatOp's node-like
// overload would take a std::string argument, hence the string_view parameter.
constexpr bool IsOpType(std::string_view name, FloatOp op) { return IsFloatOp(name, op); }

// Whether `name` is one of the float operators `ops`.
constexpr bool IsOpTypeIn(std::string_view name, std::initializer_list<FloatOp> ops) {
  return std::any_of(ops.begin(), ops.end(), [&](FloatOp op) { return IsFloatOp(name, op); });
}

}  // namespace octet::onnx_names
