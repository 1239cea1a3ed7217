// Reading and checking the per-tensor qparams and shared attributes of the int8 non-GEMM operators.
#include "ops/int8/activation_qparams.h"

#include <algorithm>

#include <fmt/format.h>

#include "ops/reference/fused_activation_reference.h"

namespace octet::int8_ops {
namespace {

Result<QActivation> FromQParams(const QParams& qp, DType dtype, const std::string& what) {
  if (qp.dtype() != DType::kU8 && qp.dtype() != DType::kS8) {
    return InvalidArgument("{} must be u8 or s8, but its qparams are {}", what, qp.dtype());
  }
  if (dtype != qp.dtype()) return InvalidArgument("{} is {} but its qparams are {}", what, dtype, qp.dtype());
  if (qp.per_channel() && qp.num_channels() != 1) {
    return InvalidArgument("{} must have per-tensor qparams, got {}", what, qp.ToString());
  }
  QActivation a;
  a.dtype = qp.dtype();
  a.scale = qp.scale();
  a.zero_point = qp.zero_point();
  a.quant_min = qp.quant_min();
  a.quant_max = qp.quant_max();
  return a;
}

}  // namespace

std::string QActivation::ToString() const {
  return fmt::format("{} scale {} zero point {} range [{}, {}]", DTypeName(dtype), scale, zero_point, quant_min,
                     quant_max);
}

// "input 1 (B) 'conv1.out'": the slot, its ONNX role and, when the executor gave it, the value's name.
std::string InputLabel(const OpPrepareArgs& args, size_t slot, const char* role) {
  const std::string_view name = slot < args.inputs.size() ? args.inputs[slot].name : std::string_view();
  return name.empty() ? fmt::format("input {} ({})", slot, role) : fmt::format("input {} ({}) '{}'", slot, role, name);
}
std::string OutputLabel(const OpPrepareArgs& args, size_t slot, const char* role) {
  const std::string_view name = slot < args.output_names.size() ? args.output_names[slot] : std::string_view();
  return name.empty() ? fmt::format("output {} ({})", slot, role) : fmt::format("output {} ({}) '{}'", slot, role, name);
}

Result<QActivation> ReadInputActivation(const OpPrepareArgs& args, size_t slot, const char* role) {
  const std::string what = InputLabel(args, slot, role);
  if (slot >= args.inputs.size() || !args.inputs[slot].present) return InvalidArgument("{} is required", what);
  const ValueInfo& info = args.inputs[slot];
  if (info.dtype != DType::kU8 && info.dtype != DType::kS8) {
    return InvalidArgument("{} must be u8 or s8, got {}", what, info.dtype);
  }
  if (info.qparams == nullptr) {
    return InvalidArgument("{} has no qparams: an int8 operator needs the scale and zero point of every input", what);
  }
  return FromQParams(*info.qparams, info.dtype, what);
}

Result<QActivation> ReadOutputActivation(const OpPrepareArgs& args, size_t slot, const char* role) {
  const std::string what = OutputLabel(args, slot, role);
  if (slot >= args.output_qparams.size() || args.output_qparams[slot] == nullptr) {
    return InvalidArgument("{} has no qparams: an int8 operator takes its output scale and zero point from them",
                           what);
  }
  const QParams& qp = *args.output_qparams[slot];
  return FromQParams(qp, qp.dtype(), what);
}

Status CheckSharedQParams(const QActivation& x, const QActivation& y, std::string_view op) {
  if (!x.SameAs(y)) {
    return InvalidArgument("{} needs the output qparams equal to the input's (it moves codes without "
                           "requantizing), got input {} and output {}",
                           op, x.ToString(), y.ToString());
  }
  return OkStatus();
}

Result<std::pair<int32_t, int32_t>> ReadActivationBounds(const OpPrepareArgs& args, const QActivation& y) {
  OCTET_ASSIGN_OR_RETURN(const reference::ActivationBounds b,
                         reference::FusedActivationBounds(args.node.attributes, y.scale, y.zero_point, y.quant_min,
                                                          y.quant_max));
  return std::pair<int32_t, int32_t>{b.lo, b.hi};
}

Result<Requantization> ReadRequantization(const OpPrepareArgs& args) {
  OCTET_ASSIGN_OR_RETURN(std::string r, args.node.attributes.GetString("requantization", "fp32"));
  if (r == "fp32") return Requantization::kFp32;
  if (r == "q31") return Requantization::kQ31;
  if (r == "fbgemm") return Requantization::kFbgemm;
  return InvalidArgument("attribute requantization must be \"fp32\", \"q31\" or \"fbgemm\", got \"{}\"", r);
}

const char* RequantizationName(Requantization r) {
  switch (r) {
    case Requantization::kFp32: return "fp32";
    case Requantization::kQ31: return "q31";
    case Requantization::kFbgemm: return "fbgemm";
  }
  return "?";
}

}  // namespace octet::int8_ops
