// ONNX QDQ export: writes a quantized octet graph (quant/convert.h, quant/dynamic.h, quant/weight_only.h; the
// operators of ops/int8/int8_ops.h) as an ONNX model in the QuantizeLinear / DequantizeLinear form that ONNX Runtime
// and TensorRT fuse into integer kernels.
//
// The mapping: every u8/s8/s32 value keeps its name in ONNX; an int8 operator becomes DequantizeLinear on each
// integer input (one per value, shared by its consumers), the float operator and QuantizeLinear to the output's
// qparams: the groups ONNX Runtime's graph optimizer fuses into QLinearConv / QLinearMatMul / QGemm (checked by
// tests/onnx/ort_qdq/ on its optimized graph). Weights stay s8 initializers with per-axis scales (axis 0) and zero
// point 0, biases int32 initializers of scale a_scale * w_scale[c] and zero point 0 (DequantizeLinear of int32,
// opset 13). A quant range narrower than the dtype (reduce_range's 7-bit [0, 127], [-127, 127]) and a fused Relu
// or Clip are a Clip on the integer codes after the QuantizeLinear (none where the bound is the dtype's, as for a
// Relu with zero point 0 on u8): quantization commutes with them, so this is exact, and the operator before the
// QuantizeLinear still fuses. s8 activations go out as u8 with zero point + 128 (the same real values; ONNX
// Runtime's x86 int8 kernels take u8 activations), except at the graph's interface. Shape-only operators
// (Reshape, Flatten, ...) run on the integer tensors directly, as in octet. Dynamic operators are written as their
// float operator on dequantized weights (ONNX Runtime then runs them in float, not per-call int8). HardSwish,
// which opset 13 lacks, is written as x * HardSigmoid(x, 1/6, 1/2). A float graph (no integer values) is written
// as the plain ONNX model it is (`octet train -o TRAINED.onnx`).
//
// Numerics: ONNX Runtime's QLinear kernels round like octet's fp32 profile but not bit for bit (its multipliers and
// QuantizeLinear's x / s differ in the last bit now and then), so its outputs agree with octet's to within one LSB
// on nearly every element, not exactly; tests/onnx/ort_qdq/ checks this in ONNX Runtime itself.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

struct QdqExportOptions {
  std::string producer_name = "octet";
  // Also list, as graph outputs, the integer tensors that the DequantizeLinear nodes at the graph outputs read
  // (named as in the octet graph), so a consumer can compare integers and recover the output qparams.
  bool expose_quantized_outputs = false;
  // Write each int8 Conv of one input channel over a small image (the digits CNN's stem) as one Gemm over the
  // image's pixels, which ONNX Runtime runs faster than its own float (io/onnx/dense_stem.h has the rule), and move
  // a Clip on int8 codes that only a MaxPool reads after that MaxPool (io/onnx/qdq_export_dense_stem.h); the import
  // folds both back. `octet quantize --no-dense-stem` turns them off.
  bool dense_stems = true;
};

// The serialized ModelProto (opset 13 of the default domain; 17 when the graph keeps a float LayerNormalization).
// Fails naming the node whose operator has no QDQ form, or a value whose qparams or dtype cannot be written.
Result<std::string> ExportQdqModel(const Graph& graph, const QdqExportOptions& options = {});

// ExportQdqModel written to `path` atomically (io/file_util.h).
Status WriteQdqModel(const std::string& path, const Graph& graph, const QdqExportOptions& options = {});

// The int8 Conv / Gemm / MatMul nodes (QConv, QGemm, QMatMul) whose QDQ form ONNX Runtime may compute wrongly on x86
// CPUs without VNNI: their activation input is 8-bit (u8 above 127, or s8) and their weight s8. There ONNX Runtime's
// fused u8 x s8 kernels add pairs of products in int16 (AVX2's vpmaddubsw), which saturates unless the activations
// are 7-bit u8 ([0, 127], the x86/fbgemm presets' reduce_range); the results can then be off by tens of LSB. With
// AVX-512 VNNI or AVX-VNNI, or with graph optimizations off, ONNX Runtime computes them exactly.
std::vector<std::string> NodesSaturatingWithoutVnni(const Graph& graph);

}  // namespace octet
