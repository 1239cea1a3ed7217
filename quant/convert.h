// Convert: the last step of static post-training quantization (torch.ao.quantization.quantize_fx.convert_fx). It
// turns a calibrated PreparedGraph into a graph of int8 operators (ops/int8/int8_ops.h) that stays int8 between
// layers, with float islands where a node is not quantized.
//
// What the converted graph holds:
//   * Graph inputs and outputs keep their names and stay f32: a Quantize node ("<x>.quantize" -> "<x>.q") feeds the
//     int8 consumers of an input; a Dequantize produces each output (the int8 value gets a derived name).
//   * Every quantized node keeps its float node's name (the numeric suite matches nodes by name):
//       Conv, Gemm, MatMul with a constant weight -> QConv, QGemm, QMatMul. The weight is quantized to an s8
//         constant with the qparams its weight observer computed (per channel along the output-channel axis);
//         symmetric weights are re-derived from the observed range when the profile's symmetric range is narrower
//         (tflite: [-127, 127]). The bias becomes an s32 constant QuantizeBias(b, a_scale, w_scale[c]) with
//         qparams (a_scale * w_scale[c], 0), or stays f32 for pytorch-fbgemm. Attribute requantization comes from
//         the profile; a fused Relu becomes activation "Relu".
//       Add, Mul -> QAdd, QMul; AveragePool, GlobalAveragePool -> QAveragePool, QGlobalAveragePool; HardSwish,
//         Sigmoid, Tanh, HardSigmoid, LeakyRelu, Gelu -> QLookup (attribute function = the op type);
//         LayerNormalization, Softmax over axis -1 -> QLayerNorm (Scale, B stay f32 constants), QSoftmax;
//         MatMul of two activations -> QBatchMatMul.
//       MaxPool, GlobalMaxPool -> QMaxPool, QGlobalMaxPool; Relu -> QClamp(min 0); Clip -> QClamp(min, max);
//         Concat -> QConcat; Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Identity, Split keep their ONNX op
//         and run on int8 with their input's qparams (every output of Split); Dropout (inference) -> Identity.
//   * Nodes that stay float (QConfig none, no int8 operator, Softmax over another axis, a dynamic QConfig
//     -- QuantizeDynamic's business, not Convert's) keep their op: their int8 inputs are dequantized (one
//     Dequantize per value, "<v>.dequantize" -> "<v>.dq", shared by all float consumers) and their outputs quantized
//     with the observed qparams where int8 consumers need them. Two more stay float: a node whose output is a
//     divisor (a Div's input 1, also through Sqrt), since int8 can round var + eps to 0 and 0 / 0 is NaN on a
//     zero-variance LayerNorm; and a shape op (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity, Dropout)
//     fed by a node kept float on request (keep_float, a none QConfig: --skip), so that value is quantized once,
//     by the next node that computes in int8.
//   * A value keeps its name in the form its producer gives it (graph inputs and float nodes: f32, quantized nodes:
//     int8; graph outputs: always f32); other forms get derived names ("<v>.q", "<v>.dq", "<v>.rq") made unique
//     against every name of the graph. A constant keeps its name in the form the graph uses (the f32 one if both).
//   * Requantize ("<v>.requantize" -> "<v>.rq") converts an int8 value whose qparams differ from what a consumer
//     needs: a Conv/Gemm/MatMul/Add/... whose QConfig asks for another activation dtype than the value's observer
//     gave (the same real range, re-expressed in the consumer's format). Values with a float producer are quantized
//     straight to the qparams the consumer needs instead.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "quant/numerics_profile.h"
#include "quant/prepare.h"

namespace octet {

struct ConvertOptions {
  NumericsProfile profile = NumericsProfile::kReference;
  // Nodes of the prepared graph (by name) to keep float whatever their QConfig says, using the observers the
  // calibration filled for their neighbours: sensitivity analysis converts one calibrated PreparedGraph many times
  // with different sets kept float. A name that is no node of the prepared graph fails Convert.
  std::set<std::string> keep_float;
  // Fold each QClamp (Relu, Clip, ReLU6 not fused in the float graph) into the int8 operator that feeds it
  // (quant/fuse_int8_activation.h); the outputs stay the same bit for bit. Off: one int8 node per float node.
  bool fuse_activations = true;
};

// What Convert did with each node of the prepared graph.
struct ConvertReport {
  struct FloatNode {
    std::string node;
    std::string op_type;
    std::string reason;
  };
  std::vector<std::string> quantized;  // node names, graph order
  std::vector<FloatNode> kept_float;   // graph order
};

// The converted graph (verified; run it with QuantizedGraphRegistry()). Fails when an observer cannot give qparams
// (an activation calibration never reached, naming the value and its node), or when the qparams of a node to
// quantize cannot be used by its int8 operator (naming node and value: weights that are not s8, per-channel
// activations). `report`, when given, receives which nodes were quantized and why others stayed float.
Result<Graph> Convert(const PreparedGraph& prepared, const ConvertOptions& options = {},
                      ConvertReport* report = nullptr);

}  // namespace octet
