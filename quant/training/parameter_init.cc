// PyTorch's default parameter initialisation.
#include "quant/training/parameter_init.h"

#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "core/float_op_table.h"
#include "quant/training/trainable_parameters.h"

namespace octet::training {
namespace {

// Uniform in [lo, hi) from 53 random bits.
float Uniform(std::mt19937_64& rng, double lo, double hi) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return static_cast<float>(lo + (hi - lo) * u);
}

// The fan-in of a weight-like input of `node`, or 0 when it cannot be told.
int64_t FanIn(const Graph& graph, const Node& node, ValueId weight) {
  const Shape& w = graph.value(weight).data.shape();
  if (node.op_type == FloatOpName(FloatOp::kConv) && w.rank() >= 2) return w.Product(1, w.rank());
  if (node.op_type == FloatOpName(FloatOp::kGemm) && w.rank() == 2) {
    const Result<int64_t> trans_b = node.attributes.GetInt("transB", 0);
    if (!trans_b.ok()) return 0;
    return *trans_b != 0 ? w.dim(1) : w.dim(0);
  }
  if (node.op_type == FloatOpName(FloatOp::kMatMul) && w.rank() >= 1) {
    return w.rank() >= 2 ? w.dim(w.rank() - 2) : w.dim(0);
  }
  return 0;
}

Status Fill(Graph& graph, ValueId id, const std::function<float()>& draw) {
  Value& v = graph.mutable_value(id);
  OCTET_ASSIGN_OR_RETURN(Tensor fresh, Tensor::Create(DType::kF32, v.data.shape()));
  for (float& x : fresh.values<float>()) x = draw();
  v.data = std::move(fresh);
  return OkStatus();
}

}  // namespace

Status ResetParameters(Graph& graph, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const TrainableState state = FindTrainableParameters(graph);
  // A node's bias takes its weight's fan-in, so weights go first.
  std::map<int, int64_t> node_fan_in;
  for (const TrainableParameter& p : state.parameters) {
    const Node& node = graph.node(p.node);
    if (p.role == ParameterRole::kWeight && node.op_type != FloatOpName(FloatOp::kLSTM)) {
      const int64_t fan_in = FanIn(graph, node, p.value);
      if (fan_in <= 0) {
        return InvalidArgument("failed to initialise '{}' of node '{}': cannot tell its fan-in from shape {}",
                               graph.value(p.value).name, node.name, graph.value(p.value).data.shape());
      }
      node_fan_in[p.node] = fan_in;
    }
  }
  for (const TrainableParameter& p : state.parameters) {
    const Node& node = graph.node(p.node);
    double bound = 0.0;
    if (node.op_type == FloatOpName(FloatOp::kLSTM)) {
      OCTET_ASSIGN_OR_RETURN(int64_t hidden, node.attributes.GetInt("hidden_size"));
      bound = 1.0 / std::sqrt(static_cast<double>(hidden));
    } else if (p.role == ParameterRole::kBatchNormScale || p.role == ParameterRole::kBatchNormBias) {
      const float value = p.role == ParameterRole::kBatchNormScale ? 1.0f : 0.0f;
      OCTET_RETURN_IF_ERROR(Fill(graph, p.value, [value] { return value; }));
      continue;
    } else {
      // A bias of an Add after MatMul takes the MatMul's fan-in: the size of the reduced dimension.
      int fan_node = p.node;
      if (node.op_type == FloatOpName(FloatOp::kAdd)) {
        const std::vector<int> producers = graph.Producers();
        for (ValueId in : node.inputs) {
          const int producer = in == kNoValue ? -1 : producers[static_cast<size_t>(in)];
          if (producer >= 0 && node_fan_in.count(producer)) fan_node = producer;
        }
      }
      auto it = node_fan_in.find(fan_node);
      if (it == node_fan_in.end()) {
        return InvalidArgument("failed to initialise '{}' of node '{}': no weight to take the fan-in from",
                               graph.value(p.value).name, node.name);
      }
      bound = 1.0 / std::sqrt(static_cast<double>(it->second));
    }
    OCTET_RETURN_IF_ERROR(Fill(graph, p.value, [&] { return Uniform(rng, -bound, bound); }));
  }
  for (ValueId b : state.buffers) {
    // Inputs 3 and 4 of BatchNormalization: the mean (0) and the variance (1).
    bool is_var = false;
    for (const Node& node : graph.nodes()) {
      if (node.op_type == FloatOpName(FloatOp::kBatchNormalization) && node.inputs.size() > 4 && node.inputs[4] == b) {
        is_var = true;
      }
    }
    OCTET_RETURN_IF_ERROR(Fill(graph, b, [is_var] { return is_var ? 1.0f : 0.0f; }));
  }
  return OkStatus();
}

}  // namespace octet::training
