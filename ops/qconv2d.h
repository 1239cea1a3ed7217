// The int8 2-D convolution operator (NHWC activations, OHWI s8 weights per output channel, groups, stride, padding
// with the input zero point, dilation) on top of qgemm, with qgemm's output stages (int32, fp32 / q31 / fbgemm
// requantization with fused clamps, float out). Spec: reference::QConv2dAccumulate then reference::QGemmApplyStage
// (ops/reference/qconv2d_reference.h).
//
// Paths, chosen once in Create from the parameters alone:
//   depthwise: groups = c_in = c_out, symmetric weights, <= kQDwConvMaxTaps taps -> the qdwconv kernels (ops/qdwconv.h)
//   1x1:       a 1x1 kernel, stride 1, no padding, one group: the NHWC input is already the GEMM's A ([N*H*W, C_in]),
//              no copy at all
//   im2col:    everything else, including small-C_in first layers: each output pixel's receptive field (pad taps
//              = the zero point) is gathered into one dense row of K = kh * kw * c_in / groups bytes, so a 3-channel
//              7x7 stem runs as a K = 147 GEMM instead of 49 GEMMs of K = 3; one GEMM per group.
//   indirect:  an im2col plan's alternative, chosen per call: where the GEMM would run one of qgemm's AVX2 kernels
//              (no VNNI) for the call's activation range, with symmetric weights, channels per group in 4s and
//              K <= 2304 (<= 4608 for calls with few output pixels), the qigemm kernel of the same name reads the
//              input through one pointer per (output pixel, tap) (ops/reference/qconv2d_indirect_reference.h) with
//              the same arithmetic: no gather, no copy.
// Every path runs qgemm's kernels and tiling, so results are bit-identical at any thread count and equal the
// reference on every ISA.
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

class QConv2dPlan {
 public:
  QConv2dPlan() = default;

  // weights: s8 [c_out, kernel_h, kernel_w, c_in / groups], per-tensor or per-channel on axis 0, symmetric or affine.
  // x_qparams: the activations' per-tensor qparams (u8 or s8). output: the stage, bias per output channel (c_out
  // values). Fails with a message naming the offending value (shapes, params, qparams, the int32 K bound).
  static Result<QConv2dPlan> Create(const Context& context, const QTensor& weights, const Conv2dParams& params,
                                    const QParams& x_qparams, const QGemmOutput& output);

  // x: [N, H, W, c_in] of the prepared dtype; the result [N, OH, OW, c_out] of output_dtype(). Records the path
  // under "qconv2d" and the kernel under "qgemm", "qigemm" or "qdwconv".
  Result<Tensor> Run(const Context& context, const Tensor& x) const;
  Status RunInto(const Context& context, const Tensor& x, Tensor& y) const;
  Result<Shape> OutputShape(const Shape& x) const;
  DType output_dtype() const;
  // "depthwise", "1x1" or "im2col" (whose calls may take the "indirect" path; the context records the one taken
  // under "qconv2d", and its kernel under "qigemm").
  const char* path() const;
  // The ukernel a call with m = N * OH * OW output pixels runs on `context` ("a or b" where the activations' range
  // decides), for operator kernel names. im2col chunks are never below 32 rows or m, so m picks their M bucket.
  std::string UkernelName(const Context& context, int64_t m) const;

  struct State;

 private:
  std::shared_ptr<const State> state_;
};

// QConv2dPlan::Create(context, weights, params, x.qparams(), output) then Run(context, x.values()).
Result<Tensor> QConv2d(const Context& context, const QTensor& x, const QTensor& weights, const Conv2dParams& params,
                       const QGemmOutput& output);

}  // namespace octet
