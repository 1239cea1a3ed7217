// Qparams lookups and the output stage of the int8 linear operators, read at Prepare.
#include "ops/int8/linear_output.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/reference/fused_activation_reference.h"
#include "ops/reference/qgemm_reference.h"

namespace octet::int8_ops {

std::string InputName(const OpPrepareArgs& args, size_t slot) {
  if (slot < args.inputs.size() && !args.inputs[slot].name.empty()) {
    return fmt::format("'{}'", args.inputs[slot].name);
  }
  return fmt::format("input {}", slot);
}

std::string OutputName(const OpPrepareArgs& args, size_t slot) {
  if (slot < args.output_names.size() && !args.output_names[slot].empty()) {
    return fmt::format("'{}'", args.output_names[slot]);
  }
  return fmt::format("output {}", slot);
}

Result<const QParams*> InputQParams(const OpPrepareArgs& args, size_t slot, const char* role) {
  if (slot >= args.inputs.size() || !args.inputs[slot].present) {
    return InvalidArgument("input {} ({}) is missing", slot, role);
  }
  if (args.inputs[slot].qparams == nullptr) {
    return InvalidArgument("input {} ({}) has no qparams (every {} value of a quantized graph needs them)",
                           InputName(args, slot), role, args.inputs[slot].dtype);
  }
  return args.inputs[slot].qparams;
}

Result<const QParams*> OutputQParams(const OpPrepareArgs& args, size_t slot) {
  if (slot >= args.output_qparams.size() || args.output_qparams[slot] == nullptr) {
    return InvalidArgument("output {} has no qparams (the output scale and zero point come from them)",
                           OutputName(args, slot));
  }
  return args.output_qparams[slot];
}

namespace {
Status CheckActivation(const QParams& qp, const std::string& what) {
  if (qp.dtype() != DType::kU8 && qp.dtype() != DType::kS8) {
    return InvalidArgument("{} must be u8 or s8, got {}", what, qp.dtype());
  }
  if (qp.per_channel()) {
    return InvalidArgument("{} needs per-tensor qparams, got {}", what, QSchemeName(qp.scheme()));
  }
  return OkStatus();
}
}  // namespace

Result<const QParams*> ActivationInputQParams(const OpPrepareArgs& args, size_t slot, const char* role) {
  OCTET_ASSIGN_OR_RETURN(const QParams* qp, InputQParams(args, slot, role));
  const std::string what = fmt::format("input {} ({})", InputName(args, slot), role);
  if (args.inputs[slot].dtype != qp->dtype()) {
    return InvalidArgument("{} is {} but its qparams are {}", what, args.inputs[slot].dtype, qp->dtype());
  }
  OCTET_RETURN_IF_ERROR(CheckActivation(*qp, what));
  return qp;
}

Result<const QParams*> ActivationOutputQParams(const OpPrepareArgs& args) {
  OCTET_ASSIGN_OR_RETURN(const QParams* qp, OutputQParams(args, 0));
  OCTET_RETURN_IF_ERROR(CheckActivation(*qp, fmt::format("output {}", OutputName(args, 0))));
  return qp;
}

Result<const QParams*> ConstantWeightQParams(const OpPrepareArgs& args, size_t slot) {
  const ValueInfo& w = args.inputs[slot];
  if (!w.present) return InvalidArgument("input {} (W) is missing", slot);
  if (w.constant == nullptr) {
    return InvalidArgument("input {} (W) must be a constant (weights are packed at Prepare)", InputName(args, slot));
  }
  if (w.dtype != DType::kS8) return InvalidArgument("input {} (W) must be s8, got {}", InputName(args, slot), w.dtype);
  return InputQParams(args, slot, "W");
}

namespace {

Result<QGemmStage> ReadLinearRequantization(const AttributeMap& at) {
  OCTET_ASSIGN_OR_RETURN(const std::string scheme, at.GetString("requantization", "fp32"));
  if (scheme == "fp32") return QGemmStage::kFp32;
  if (scheme == "q31") return QGemmStage::kQ31;
  if (scheme == "fbgemm") return QGemmStage::kFbgemm;
  return InvalidArgument("attribute 'requantization' must be \"fp32\", \"q31\" or \"fbgemm\", got \"{}\"", scheme);
}

// Producers may derive the bias scale from scales before their float rounding, so a few ulp of difference are
// accepted; anything more means the integers would be read in other units than the accumulator's.
constexpr float kBiasScaleRelTolerance = 1e-5f;

Status CheckS32BiasQParams(const OpPrepareArgs& args, size_t slot, const QParams& b_qp, const QParams& x_qp,
                           const QParams& w_qp, int64_t channels) {
  const std::string what = fmt::format("input {} (B)", InputName(args, slot));
  if (b_qp.per_channel() && (b_qp.axis() != 0 || b_qp.num_channels() != channels)) {
    return InvalidArgument("{} needs {} per-channel qparams on axis 0, got {} on axis {}", what, channels,
                           b_qp.num_channels(), b_qp.axis());
  }
  for (int64_t c = 0; c < channels; ++c) {
    const size_t bc = b_qp.per_channel() ? static_cast<size_t>(c) : 0;
    const int32_t zp = b_qp.zero_points()[bc];
    if (zp != 0) return InvalidArgument("{} must have zero point 0, got {} (channel {})", what, zp, c);
    const float want = x_qp.scale() * WeightScale(w_qp, c);
    const float got = b_qp.scales()[bc];
    if (!(std::fabs(got - want) <= kBiasScaleRelTolerance * want)) {
      return InvalidArgument("{} must have scale input scale * weight scale = {} (channel {}), got {}", what, want,
                             c, got);
    }
  }
  return OkStatus();
}

}  // namespace

Result<QGemmOutput> ReadLinearOutput(const OpPrepareArgs& args, const QParams& x_qp, const QParams& w_qp,
                                     int64_t channels, size_t bias_slot, const QParams& y_qp) {
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(const QGemmStage stage, ReadLinearRequantization(at));
  OCTET_ASSIGN_OR_RETURN(const reference::ActivationBounds bounds,
                         reference::FusedActivationBounds(at, y_qp.scale(), y_qp.zero_point(), y_qp.quant_min(),
                                                          y_qp.quant_max()));
  QGemmOutput out = QGemmOutput::Requantized(stage, y_qp.dtype(), y_qp.scale(), y_qp.zero_point());
  out.lo = bounds.lo;
  out.hi = bounds.hi;

  if (bias_slot >= args.inputs.size() || !args.inputs[bias_slot].present) return out;
  const ValueInfo& b = args.inputs[bias_slot];
  const std::string what = fmt::format("input {} (B)", InputName(args, bias_slot));
  if (b.shape.rank() != 1 || b.shape.dim(0) != channels) {
    return InvalidArgument("{} must have shape [{}] (one value per output channel), got {}", what, channels, b.shape);
  }
  if (b.constant == nullptr) return InvalidArgument("{} must be a constant", what);
  if (b.dtype == DType::kS32) {
    if (stage == QGemmStage::kFbgemm) {
      return InvalidArgument("{} is s32, but requantization \"fbgemm\" adds a float bias (give an f32 bias)", what);
    }
    if (b.qparams == nullptr) {
      return InvalidArgument("{} has no qparams (an s32 bias needs scale input scale * weight scale, zero point 0)",
                             what);
    }
    OCTET_RETURN_IF_ERROR(CheckS32BiasQParams(args, bias_slot, *b.qparams, x_qp, w_qp, channels));
    const int32_t* v = b.constant->data<int32_t>();
    out.bias_s32.assign(v, v + channels);
    return out;
  }
  if (b.dtype != DType::kF32) return InvalidArgument("{} must be s32 or f32, got {}", what, b.dtype);
  const float* v = b.constant->data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    if (!std::isfinite(v[c])) return InvalidArgument("{} must be finite, got {} at {}", what, v[c], c);
  }
  if (stage == QGemmStage::kFbgemm) {
    out.bias_f32.assign(v, v + channels);
    return out;
  }
  out.bias_s32.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    out.bias_s32[static_cast<size_t>(c)] = reference::QuantizeBias(v[c], x_qp.scale(), WeightScale(w_qp, c));
  }
  return out;
}

}  // namespace octet::int8_ops
