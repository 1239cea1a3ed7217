// Finding the trainable constants of a graph.
#include "quant/training/trainable_parameters.h"

#include <set>

#include "core/float_op_table.h"

namespace octet::training {

const char* ParameterRoleName(ParameterRole role) {
  switch (role) {
    case ParameterRole::kWeight: return "weight";
    case ParameterRole::kBias: return "bias";
    case ParameterRole::kBatchNormScale: return "batch_norm_scale";
    case ParameterRole::kBatchNormBias: return "batch_norm_bias";
    case ParameterRole::kRecurrentWeight: return "recurrent_weight";
  }
  return "?";
}

TrainableState FindTrainableParameters(const Graph& graph) {
  TrainableState state;
  std::set<ValueId> seen;
  const std::vector<int> producers = graph.Producers();
  auto is_float_constant = [&](ValueId id) {
    return id != kNoValue && graph.value(id).kind == ValueKind::kConstant && graph.value(id).dtype == DType::kF32;
  };
  auto add = [&](int node, size_t slot, ParameterRole role) {
    const Node& n = graph.node(node);
    if (slot >= n.inputs.size() || !is_float_constant(n.inputs[slot])) return;
    if (seen.insert(n.inputs[slot]).second) state.parameters.push_back({n.inputs[slot], node, role});
  };
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& n = graph.node(i);
    if (!n.domain.empty() && n.domain != "ai.onnx") continue;
    if (n.op_type == FloatOpName(FloatOp::kConv) || n.op_type == FloatOpName(FloatOp::kGemm)) {
      add(i, 1, ParameterRole::kWeight);
      add(i, 2, ParameterRole::kBias);
    } else if (n.op_type == FloatOpName(FloatOp::kMatMul)) {
      add(i, 0, ParameterRole::kWeight);
      add(i, 1, ParameterRole::kWeight);
    } else if (n.op_type == FloatOpName(FloatOp::kBatchNormalization)) {
      add(i, 1, ParameterRole::kBatchNormScale);
      add(i, 2, ParameterRole::kBatchNormBias);
      for (size_t s : {size_t{3}, size_t{4}}) {
        if (s < n.inputs.size() && is_float_constant(n.inputs[s]) && seen.insert(n.inputs[s]).second) {
          state.buffers.push_back(n.inputs[s]);
        }
      }
    } else if (n.op_type == FloatOpName(FloatOp::kGather)) {
      add(i, 0, ParameterRole::kWeight);  // an Embedding's table
    } else if (n.op_type == FloatOpName(FloatOp::kLSTM)) {
      add(i, 1, ParameterRole::kWeight);
      add(i, 2, ParameterRole::kRecurrentWeight);
      add(i, 3, ParameterRole::kBias);
    } else if (n.op_type == FloatOpName(FloatOp::kAdd) && n.inputs.size() == 2) {
      for (size_t s = 0; s < 2; ++s) {
        const ValueId other = n.inputs[1 - s];
        const int producer = other == kNoValue ? -1 : producers[static_cast<size_t>(other)];
        if (producer >= 0 && graph.node(producer).op_type == FloatOpName(FloatOp::kMatMul)) {
          add(i, s, ParameterRole::kBias);
        }
      }
    }
  }
  return state;
}

}  // namespace octet::training
