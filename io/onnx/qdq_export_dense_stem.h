// The QDQ export's dense-stem pass (io/onnx/dense_stem.h): rewrites the int8 Conv groups of one input channel that
// fit the rule into one Gemm over the image's pixels, which ONNX Runtime runs as its QGemm over the whole batch.
#pragma once

#include <onnx/onnx_pb.h>

namespace octet {

// Rewrites, in a model written by octet's QDQ export (before its output shapes are set), every group
//   x codes [N, 1, H, W] -> DequantizeLinear -> Conv (weight: DequantizeLinear of an INT8 initializer with zero
//   points 0; bias: DequantizeLinear of an INT32 initializer) -> QuantizeLinear [-> Clip on the codes]
// that fits the rule into
//   x codes -> Reshape [N, H*W] -> DequantizeLinear -> Gemm (the dense weight, transB = 1; named by DenseStemName)
//   -> QuantizeLinear [-> Clip] -> Reshape [N, OH, OW, O] -> Transpose (0, 3, 1, 2) -> the same output codes.
// The weight's, scales' and bias's initializers keep their names (their contents tiled per output pixel). Returns
// the number of groups rewritten; leaves the model as it is where a group does not fit or shapes are unknown.
// Also moves each Clip on an int8 group's codes (a dense stem's too) after the MaxPool that alone reads them,
// where ONNX Runtime then runs its NHWC MaxPool right after the int8 kernel (exact: clamp and max commute).
int WriteDenseStems(onnx::ModelProto& model);

}  // namespace octet
