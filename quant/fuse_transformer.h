// Transformer pattern fusion: exporters before ONNX opset 17 / 20 (torch 1.13 at opset 13, tf2onnx, paddle2onnx)
// write LayerNorm and GELU as chains of elementwise ops, which static quantization would turn into a string of
// float islands (a divisor, a Pow, an Erf). These passes rewrite each chain into one float node that the int8 flow
// knows how to quantize:
//   FuseLayerNorms: ReduceMean(x) -> Sub -> Pow(2) | Mul(d, d) -> ReduceMean -> Add(eps) -> Sqrt -> Div
//                   [-> Mul(gamma)] [-> Add(beta)]  becomes LayerNormalization(x, gamma, beta) (opset 17) with
//                   axis -1 and the matched epsilon; both ReduceMeans over the last axis only, keepdims 1.
//                   Div(d, s) may also be Mul(d, Reciprocal(s)).
//   FuseGelus:      0.5 x (1 + Erf(x / sqrt 2)) (Div by sqrt 2 or Mul by 1/sqrt 2; the 0.5 on x, on the sum or on the
//                   product) becomes Gelu (opset 20); 0.5 x (1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3))) with x^3 as
//                   Pow(x, 3) or x * x * x becomes Gelu with approximate "tanh".
//   ScaleDivisionsToMul: Div(x, c) by a scalar constant c (attention's 1 / sqrt(d_k) after Q x K^T) becomes
//                   Mul(x, 1 / c), which quantizes as QMul, where Div has no int8 operator. Runs after the two above,
//                   so the divisions inside LayerNorm and GELU are gone by then.
// The fused node takes the name and output value of the chain's last node (the numeric suite matches by name), so
// graph outputs and later consumers are unchanged. A chain fuses only when its intermediate values feed nothing
// outside it and are no graph outputs. The fused graph equals the decomposed one within float rounding.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

struct TransformerFuseReport {
  std::vector<std::string> layer_norms;      // names of the LayerNormalization nodes made
  std::vector<std::string> gelus;            // names of the Gelu nodes made
  std::vector<std::string> scale_divisions;  // names of the Div nodes made Mul
};

Result<std::vector<std::string>> FuseLayerNorms(Graph& graph);
Result<std::vector<std::string>> FuseGelus(Graph& graph);
std::vector<std::string> ScaleDivisionsToMul(Graph& graph);
// The three, in the order above.
Result<TransformerFuseReport> FuseTransformerPatterns(Graph& graph);

}  // namespace octet
