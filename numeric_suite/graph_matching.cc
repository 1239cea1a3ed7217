// Pairing of float and int8 graphs for the numeric suite (see graph_matching.h).
#include "numeric_suite/graph_matching.h"

#include <algorithm>
#include <unordered_map>

#include "core/op_table.h"
#include "ops/reference/quantize_reference.h"
#include "quant/fuse.h"

namespace octet {

Result<Graph> FloatReferenceGraph(const Graph& float_graph, bool fuse) {
  Graph graph = float_graph;
  if (fuse) {
    auto report = Fuse(graph);
    if (!report.ok()) return report.status().WithContext("failed to fuse the float graph for comparison");
  }
  return graph;
}

bool IsInt8ComputeNode(const Node& node) {
  // Every int8 operator but those Convert inserts between layers (Quantize, Dequantize, Requantize).
  const std::optional<Int8Op> op = FindInt8Op(node.domain, node.op_type);
  return op && Int8OpInfoOf(*op).convert != ConvertForm::kInserted;
}

ValueId QuantizedConstantInput(const Graph& graph, int node_index, size_t slot) {
  const Node& node = graph.node(node_index);
  if (slot >= node.inputs.size() || node.inputs[slot] == kNoValue) return kNoValue;
  ValueId id = node.inputs[slot];
  auto is_quantized_constant = [&](ValueId v) {
    const Value& value = graph.value(v);
    return value.kind == ValueKind::kConstant && (value.dtype == DType::kS8 || value.dtype == DType::kU8) &&
           value.qparams.has_value();
  };
  if (is_quantized_constant(id)) return id;
  if (graph.value(id).kind != ValueKind::kNode) return kNoValue;
  // Weight-only graphs: s8 constant -> octet.Dequantize -> the float operator.
  for (const Node& producer : graph.nodes()) {
    if (std::find(producer.outputs.begin(), producer.outputs.end(), id) == producer.outputs.end()) continue;
    if (IsInt8Op(producer, Int8Op::kDequantize) && !producer.inputs.empty() && producer.inputs[0] != kNoValue &&
        is_quantized_constant(producer.inputs[0])) {
      return producer.inputs[0];
    }
    return kNoValue;
  }
  return kNoValue;
}

std::vector<MatchedNode> MatchNodes(const Graph& float_graph, const Graph& quantized,
                                    const std::vector<std::string>& allow_list) {
  std::unordered_map<std::string, int> float_index;
  for (int i = 0; i < float_graph.num_nodes(); ++i) float_index.emplace(float_graph.node(i).name, i);
  auto allowed = [&](const MatchedNode& m) {
    if (allow_list.empty()) return true;
    return std::any_of(allow_list.begin(), allow_list.end(), [&](const std::string& a) {
      return a == m.name || a == m.float_op || a == m.quantized_op;
    });
  };
  std::vector<MatchedNode> matches;
  for (int i = 0; i < quantized.num_nodes(); ++i) {
    const Node& node = quantized.node(i);
    auto it = float_index.find(node.name);
    if (it == float_index.end()) continue;
    MatchedNode m;
    m.name = node.name;
    m.float_node = it->second;
    m.quantized_node = i;
    m.float_op = float_graph.node(it->second).op_type;
    m.quantized_op = node.op_type;
    if (!IsInt8ComputeNode(node)) {
      // A float operator reading a dequantized int8 weight is a weight-only node; anything else is not quantized.
      bool has_quantized_weight = false;
      for (size_t s = 0; s < node.inputs.size(); ++s) {
        has_quantized_weight = has_quantized_weight || QuantizedConstantInput(quantized, i, s) != kNoValue;
      }
      if (!has_quantized_weight) continue;
      m.weight_only = true;
    }
    if (allowed(m)) matches.push_back(std::move(m));
  }
  return matches;
}

Result<Tensor> DequantizedCopy(const ConstTensorView& view, const QParams* qparams, const std::string& what) {
  if (view.dtype() == DType::kF32) return view.ToTensor();
  if (view.dtype() != DType::kU8 && view.dtype() != DType::kS8 && view.dtype() != DType::kS32) {
    return InvalidArgument("failed to dequantize '{}': dtype {} is not u8, s8, s32 or f32", what,
                           DTypeName(view.dtype()));
  }
  if (qparams == nullptr) return InvalidArgument("failed to dequantize '{}': the {} value has no qparams", what,
                                                 DTypeName(view.dtype()));
  if (qparams->dtype() != view.dtype()) {
    return InvalidArgument("failed to dequantize '{}': qparams are {}, the value is {}", what,
                           DTypeName(qparams->dtype()), DTypeName(view.dtype()));
  }
  OCTET_RETURN_IF_ERROR(qparams->ValidateFor(view.shape(), what));
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(DType::kF32, view.shape()));
  const int64_t n = view.NumElements();
  // Element i is in channel (i / inner) % channels along the per-channel axis.
  int64_t inner = 1, channels = 1;
  if (qparams->per_channel()) {
    channels = view.dim(qparams->axis());
    inner = view.shape().Product(qparams->axis() + 1, view.rank());
  }
  float* y = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const size_t c = qparams->per_channel() ? static_cast<size_t>((i / inner) % channels) : 0;
    const float s = qparams->scales()[c];
    const int32_t zp = qparams->zero_points()[c];
    switch (view.dtype()) {
      case DType::kU8: y[i] = reference::DequantizeValue(view.data<uint8_t>()[i], s, zp); break;
      case DType::kS8: y[i] = reference::DequantizeValue(view.data<int8_t>()[i], s, zp); break;
      default: y[i] = reference::DequantizeValue(view.data<int32_t>()[i], s, zp); break;
    }
  }
  return out;
}

Result<Tensor> DequantizedCopy(const Tensor& tensor, const QParams* qparams, const std::string& what) {
  return DequantizedCopy(ConstTensorView(tensor), qparams, what);
}

}  // namespace octet
