// Prepare helpers of the int8 operators of quantized graphs: the qparams of a node's inputs and outputs (with
// errors that name the value), and the output stage of the linear operators (QConv, QGemm, QMatMul): the
// requantization scheme, a fused Relu and the bias, as the QGemmOutput that ops/qgemm.h and ops/qconv2d.h take.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/op_registry.h"
#include "core/qparams.h"
#include "core/status.h"
#include "ops/qgemm.h"

namespace octet::int8_ops {

// "'<name>'" of input `slot` (or "input <slot>" when the executor gave no name).
std::string InputName(const OpPrepareArgs& args, size_t slot);
std::string OutputName(const OpPrepareArgs& args, size_t slot);

// Input `slot`'s qparams; fails naming the value and its `role` ("X", "W") when it has none.
Result<const QParams*> InputQParams(const OpPrepareArgs& args, size_t slot, const char* role);
// Output `slot`'s qparams; fails naming the value when it has none.
Result<const QParams*> OutputQParams(const OpPrepareArgs& args, size_t slot);
// The qparams of an activation (input `slot` or output 0): u8 or s8, per tensor, matching the value's dtype.
Result<const QParams*> ActivationInputQParams(const OpPrepareArgs& args, size_t slot, const char* role);
Result<const QParams*> ActivationOutputQParams(const OpPrepareArgs& args);
// The qparams of a weight (input `slot`, role "W"): present, a constant, s8, with qparams; fails naming the value.
Result<const QParams*> ConstantWeightQParams(const OpPrepareArgs& args, size_t slot);

// The output stage of a linear operator with K-reduction x (qparams x_qp) times weights w (qparams w_qp, whose
// per-channel scales are one per output channel) into y (y_qp), read from the node:
//   requantization "fp32" (default) | "q31" | "fbgemm"
//   activation     "" (default) | "Relu" | "Clip" (with activation_min / activation_max): the clamp bounds of
//                  reference::FusedActivationBounds under y's qparams.
//   bias           input `bias_slot` when present: a constant [channels],
//                    s32 with qparams of zero point 0 and scale x_scale * w_scale[c] (per channel, or per tensor
//                    when the weights are) -- for fp32 and q31, as is;
//                    f32 without qparams -- for fbgemm as is (added in float before the multiply); for fp32 and q31
//                    quantized here with reference::QuantizeBias (rne(b / f32(x_scale * w_scale[c])), DESIGN.md §4).
//                  An s32 bias with "fbgemm" is refused (that scheme adds a float bias).
Result<QGemmOutput> ReadLinearOutput(const OpPrepareArgs& args, const QParams& x_qp, const QParams& w_qp,
                                     int64_t channels, size_t bias_slot, const QParams& y_qp);

// The per-channel weight scale of output channel c (per-tensor qparams repeat one).
inline float WeightScale(const QParams& w_qp, int64_t c) {
  return w_qp.per_channel() ? w_qp.scales()[static_cast<size_t>(c)] : w_qp.scale();
}

}  // namespace octet::int8_ops
