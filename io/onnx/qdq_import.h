// QDQ import: rewrites the QuantizeLinear / DequantizeLinear groups of an imported ONNX graph (ONNX Runtime's
// quantize_static, PyTorch's exporter, octet's own QDQ export) into the int8 graph octet's Convert makes, so that it
// runs on octet's kernels and carries its qparams on its values.
//
// What is recognised (scales and zero points must be constants, as every quantizer writes them):
//   - every integer value read by DequantizeLinear or written by QuantizeLinear gets those qparams (per tensor, or
//     per axis for constants); QuantizeLinear becomes octet's Quantize, DequantizeLinear octet's Dequantize
//     (folded at compile time on constant weights); shape-only ops (Reshape, Flatten, ...) pass them on;
//   - Dequantize -> Conv | Gemm | MatMul (weight a Dequantize of a constant, bias a Dequantize of an int32 constant
//     or a float constant) [-> Relu] [-> Clip] -> Quantize becomes QConv | QGemm | QMatMul with the activation
//     fused (a Clip whose bounds are exact codes of the output narrows its quant range instead, the form octet's
//     export writes for reduced ranges); u8 weights are shifted to s8 with their zero point;
//   - Dequantize -> Add | Mul [-> Relu] -> Quantize becomes QAdd | QMul; Dequantize -> MaxPool | GlobalMaxPool ->
//     Quantize with equal qparams QMaxPool | QGlobalMaxPool; AveragePool | GlobalAveragePool become QAveragePool |
//     QGlobalAveragePool; Dequantize -> Relu | Clip -> Quantize with equal qparams QClamp; Concat QConcat;
//     Sigmoid | Tanh | HardSigmoid | HardSwish | LeakyRelu QLookup; Dequantize -> Reshape | Flatten | ... ->
//     Quantize with equal qparams the shape op on the integers;
//   - a Clip on integer codes (octet's export since issue 23): after a QuantizeLinear, a bound that is a preset's
//     reduced end (u8 127, s8 -127, u8 1) narrows its quant range, any other bound is a QClamp (folded into a
//     producing QConv / QGemm / QMatMul / QAdd / QMul as its activation); a QConv / QGemm / QMatMul whose output
//     zero point is its quant_min gets activation Relu (the export writes such a Relu as no node);
//   - PyTorch 1.13's form: scales, zero points, weights and biases made by Constant / ConstantOfShape / Cast nodes
//     are folded into constants, and the Cast to the same 8-bit type after each QuantizeLinear is skipped;
//   - transformer ops: Dequantize -> MatMul of two non-constant Dequantize inputs -> Quantize becomes QBatchMatMul;
//     Softmax (axis -1) QSoftmax; LayerNormalization (axis -1, constant float Scale / B) QLayerNorm; Gelu QLookup
//     of Gelu. LayerNorm and GELU written out as opset-13 arithmetic (octet's export, torch 1.13, tf2onnx) are first
//     fused by quant/fuse_transformer.h (a decomposed chain anywhere in a QDQ graph becomes one float node, also
//     where it then stays float), so they are recognised in either form;
//   - QLinearConv / QLinearMatMul (the QOperator form) with constant weights, bias and qparams become QConv /
//     QMatMul on the same integers.
// Anything else stays as it was: the Q/DQ ops then run as ONNX ops (ops/float/quantize_linear.h), correct and
// slower, and the report says which float node between them stayed float and why.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

struct QdqImportReport {
  int quantize = 0;    // QuantizeLinear nodes now octet Quantize
  int dequantize = 0;  // DequantizeLinear nodes now octet Dequantize
  int groups = 0;      // float operators now int8 operators
  // "'conv1' (Conv): its weight is not a DequantizeLinear of a constant" for every float node reading a
  // dequantized value that stayed float; Q/DQ nodes left as ONNX ops with the reason.
  std::vector<std::string> kept_float;
};

// Rewrites `graph` in place (it must be verified and sorted, as ImportOnnxModel returns it). A graph without
// QuantizeLinear / DequantizeLinear is left unchanged (an empty report). Fails only on an inconsistent graph.
Result<QdqImportReport> RecognizeQdqGroups(Graph& graph);

// Whether the graph holds int8 operators (domain "octet"): it then runs with QuantizedGraphRegistry().
bool HasInt8Ops(const Graph& graph);

}  // namespace octet
