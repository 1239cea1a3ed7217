// The int8 depthwise convolution operator (one filter per channel, NHWC): weights validated and packed once, the
// output stage derived once (qgemm's, per channel), then Run per call over the qdwconv kernels
// (ops/ukernels/qdwconv.h). Spec: reference::QConv2dAccumulate with groups = channels, then QGemmApplyStage.
#pragma once

#include <memory>
#include <string>

#include "core/context.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ops/conv2d_params.h"
#include "ops/qgemm.h"

namespace octet {

class QDwConvPlan {
 public:
  QDwConvPlan() = default;

  // weights: s8 [C, kernel_h, kernel_w, 1] (OHWI with one input channel per group), per-tensor or per-channel
  // (axis 0) and symmetric (every zero point 0: the kernels fold the input zero point into a per-channel offset,
  // which a weight zero point would break); params.groups == C; kernel_h * kernel_w <= kQDwConvMaxTaps. x_qparams:
  // the activations' per-tensor qparams (u8 or s8; the zero point is the pad value). Fails naming the offending value.
  static Result<QDwConvPlan> Create(const Context& context, const QTensor& weights, const Conv2dParams& params,
                                    const QParams& x_qparams, const QGemmOutput& output);
  // Whether Create accepts these weights and params (the qconv2d operator routes depthwise layers here when it does).
  static bool Supports(const QTensor& weights, const Conv2dParams& params);

  // x: [N, H, W, C] of the prepared dtype; y: [N, OH, OW, C] of output_dtype(). The kernel is chosen per call
  // (recorded under "qdwconv"); each output pixel is computed whole by one kernel call, so results are bit-identical
  // at any thread count and equal the reference on every ISA.
  Result<Tensor> Run(const Context& context, const Tensor& x) const;
  Status RunInto(const Context& context, const Tensor& x, Tensor& y) const;
  Result<Shape> OutputShape(const Shape& x) const;
  DType output_dtype() const;
  // The ukernel RunInto runs on `context`, for operator kernel names.
  const char* UkernelName(const Context& context) const;

  struct State;

 private:
  std::shared_ptr<const State> state_;
};

}  // namespace octet
