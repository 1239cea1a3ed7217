// QuantizeDynamic: dynamic quantization of a float graph (DESIGN.md §6; torch.ao.quantization.quantize_dynamic).
// Nodes whose QConfig (from the mapping) is dynamic -- activation PlaceholderObserver, GetDefaultDynamicQConfig --
// are replaced, keeping their names, by the dynamic int8 operators of ops/int8/int8_ops.h:
//   Gemm (constant f32 weight, transA 0, alpha = beta = 1, bias absent or a constant [N] / [1, N])  -> DynamicQGemm
//   MatMul (constant f32 rank-2 weight at input 1)                                               -> DynamicQMatMul
//   LSTM, GRU (constant W and R)                                                          -> DynamicQLSTM / QGRU
// Their weights are quantized once by the QConfig's weight observer, per channel along the output-channel axis when
// it is a per-channel observer (Gemm: transB ? 0 : 1, MatMul: 1, LSTM/GRU W and R: 1), into new s8 constants
// "<weight>_quantized" that carry the qparams; activations are quantized by the operators on every call. Other nodes
// (and the ones above that do not qualify, listed in the report) stay float; static QConfigs are ignored here.
#pragma once

#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "quant/qconfig_mapping.h"

namespace octet {

struct QuantizeDynamicOptions {
  // The operators' reduce_range attribute. false (default): activations use [0, 255] -- octet's kernels are exact
  // over the full u8 range (DESIGN.md §4 checks operand ranges instead of PyTorch's blanket reduce_range), and
  // QNNPACK does the same. true: [0, 127], PyTorch's FBGEMM dynamic Linear / LSTM numbers (about 6 dB less SQNR).
  bool reduce_range = false;
  // Per-token activations (DynamicQGemm / DynamicQMatMul attribute per_token = 1): u8 qparams per row of x, chosen
  // per call from that row's range (reference::PerTokenDynamicQGemm), instead of one pair per call. The LSTM / GRU
  // operators are per tensor either way.
  bool per_token = false;
  const Context* context = nullptr;  // runs the weight observers and quantization (nullptr: the default)
};

struct QuantizeDynamicReport {
  std::vector<std::string> quantized;  // node names, in graph order
  // "<node>: <why it stays float>" for nodes with a dynamic QConfig that could not be converted.
  std::vector<std::string> kept_float;
};

// Fails on a mapping that does not validate against the graph, or a weight that cannot be quantized (naming node
// and weight). The result compiles with QuantizedGraphRegistry().
Result<Graph> QuantizeDynamic(const Graph& float_graph, const QConfigMapping& mapping,
                              const QuantizeDynamicOptions& options = {}, QuantizeDynamicReport* report = nullptr);

}  // namespace octet
