// Conv + BatchNormalization as simulated folding (see conv_bn.h).
#include "quant/qat/conv_bn.h"

#include "core/float_op_table.h"
#include "quant/graph_rewrite.h"

namespace octet::qat {
namespace {

bool IsConstantF32(const Graph& g, ValueId id, int64_t elements) {
  if (id == kNoValue) return false;
  const Value& v = g.value(id);
  return v.kind == ValueKind::kConstant && v.data.dtype() == DType::kF32 &&
         (elements < 0 || (v.data.shape().rank() == 1 && v.data.NumElements() == elements));
}

// Rewriting state: fresh names and nodes to append.
class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g) {}

  Result<ValueId> Constant(const std::string& base, Tensor data) {
    return g_.AddConstant(UniqueValueName(g_, base), std::move(data));
  }
  Result<ValueId> Shape(const std::string& base, const std::vector<int64_t>& dims) {
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(DType::kS32, octet::Shape{static_cast<int64_t>(dims.size())}));
    for (size_t i = 0; i < dims.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
    return Constant(base, std::move(t));
  }
  // Appends node `name` (op_type, inputs) producing a new value named after the node, or `output` when given.
  Result<ValueId> Node(const std::string& name, FloatOp op, std::vector<ValueId> inputs, ValueId output = kNoValue) {
    if (output == kNoValue) {
      OCTET_ASSIGN_OR_RETURN(output, g_.AddNodeValue(UniqueValueName(g_, name)));
    }
    octet::Node n;
    n.name = name;
    n.op_type = FloatOpName(op);
    n.inputs = std::move(inputs);
    n.outputs = {output};
    OCTET_RETURN_IF_ERROR(g_.AddNode(std::move(n)).status());
    return output;
  }

 private:
  Graph& g_;
};

}  // namespace

Result<std::vector<ConvBnUnit>> RewriteConvBnForQat(Graph& graph) {
  std::vector<ConvBnUnit> units;
  const std::vector<int> producers = graph.Producers();
  const std::vector<int> uses = CountUses(graph);
  const int original_nodes = graph.num_nodes();
  Rewriter r(graph);
  for (int i = 0; i < original_nodes; ++i) {
    const Node bn = graph.node(i);
    if (!IsFloatOp(bn, FloatOp::kBatchNormalization) || bn.inputs.size() != 5) continue;
    if (bn.outputs.empty() || bn.outputs[0] == kNoValue || bn.inputs[0] == kNoValue) continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs |= bn.outputs[k] != kNoValue;
    OCTET_ASSIGN_OR_RETURN(int64_t training, bn.attributes.GetInt("training_mode", 0));
    if (extra_outputs || training != 0) continue;
    const ValueId y = bn.inputs[0];
    const int p = producers[static_cast<size_t>(y)];
    if (p < 0 || uses[static_cast<size_t>(y)] != 1) continue;
    const Node conv = graph.node(p);
    if (!IsFloatOp(conv, FloatOp::kConv) || conv.inputs.size() < 2 || conv.outputs.size() != 1 ||
        !IsConstantF32(graph, conv.inputs[1], -1)) {
      continue;
    }
    const Shape w_shape = graph.value(conv.inputs[1]).data.shape();
    if (w_shape.rank() < 3) continue;
    const int64_t c = w_shape.dim(0);
    const ValueId bias = conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
    if (bias != kNoValue && !IsConstantF32(graph, bias, c)) continue;
    bool stats = true;
    for (size_t s = 1; s < 5; ++s) stats = stats && IsConstantF32(graph, bn.inputs[s], c);
    if (!stats) continue;
    OCTET_ASSIGN_OR_RETURN(float eps, bn.attributes.GetFloat("epsilon", 1e-5f));

    const std::string& name = conv.name;
    OCTET_ASSIGN_OR_RETURN(Tensor eps_t, Tensor::Create(DType::kF32, Shape{1}));
    eps_t.data<float>()[0] = eps;
    OCTET_ASSIGN_OR_RETURN(ValueId eps_v, r.Constant(name + ".bn_eps", std::move(eps_t)));
    OCTET_ASSIGN_OR_RETURN(ValueId var_eps, r.Node(name + ".bn_var_eps", FloatOp::kAdd, {bn.inputs[4], eps_v}));
    OCTET_ASSIGN_OR_RETURN(ValueId std_v, r.Node(name + ".bn_running_std", FloatOp::kSqrt, {var_eps}));
    OCTET_ASSIGN_OR_RETURN(ValueId s, r.Node(name + ".bn_scale_factor", FloatOp::kDiv, {bn.inputs[1], std_v}));
    // W * s along the output channels ([C, 1, 1, ...]); conv output / s and + b along [1, C, 1, ...].
    std::vector<int64_t> w_dims(static_cast<size_t>(w_shape.rank()), 1), y_dims(w_dims);
    w_dims[0] = c;
    y_dims[1] = c;
    OCTET_ASSIGN_OR_RETURN(ValueId w_dims_v, r.Shape(name + ".weight_channel_shape", w_dims));
    OCTET_ASSIGN_OR_RETURN(ValueId y_dims_v, r.Shape(name + ".output_channel_shape", y_dims));
    OCTET_ASSIGN_OR_RETURN(ValueId s_w, r.Node(name + ".bn_scale_factor_w", FloatOp::kReshape, {s, w_dims_v}));
    OCTET_ASSIGN_OR_RETURN(ValueId scaled, r.Node(name + ".scaled_weight", FloatOp::kMul, {conv.inputs[1], s_w}));
    OCTET_ASSIGN_OR_RETURN(ValueId s_y, r.Node(name + ".bn_scale_factor_y", FloatOp::kReshape, {s, y_dims_v}));
    OCTET_ASSIGN_OR_RETURN(ValueId raw, graph.AddNodeValue(UniqueValueName(graph, name + ".scaled_output")));
    if (bias == kNoValue) {
      OCTET_RETURN_IF_ERROR(r.Node(name + ".unscale", FloatOp::kDiv, {raw, s_y}, y).status());
    } else {
      OCTET_ASSIGN_OR_RETURN(ValueId unscaled, r.Node(name + ".unscale", FloatOp::kDiv, {raw, s_y}));
      OCTET_ASSIGN_OR_RETURN(ValueId b_y, r.Node(name + ".bias_channels", FloatOp::kReshape, {bias, y_dims_v}));
      OCTET_RETURN_IF_ERROR(r.Node(name + ".add_bias", FloatOp::kAdd, {unscaled, b_y}, y).status());
    }
    Node& conv_node = graph.mutable_node(p);
    conv_node.inputs.resize(2);
    conv_node.inputs[1] = scaled;
    conv_node.outputs[0] = raw;
    units.push_back({name, bn.name, graph.value(conv.inputs[1]).name,
                     bias == kNoValue ? std::string() : graph.value(bias).name, graph.value(scaled).name});
  }
  return units;
}

}  // namespace octet::qat
