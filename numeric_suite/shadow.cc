// Shadow: one float node run alone on given inputs (see shadow.h).
#include "numeric_suite/shadow.h"

namespace octet {

Shadow::Shadow(const Graph& float_graph, int float_node, const OpRegistry& registry, const Context& context)
    : float_graph_(&float_graph), float_node_(float_node), registry_(&registry), context_(&context) {}

bool Shadow::IsConstantSlot(size_t slot) const {
  const Node& node = float_graph_->node(float_node_);
  return slot < node.inputs.size() && node.inputs[slot] != kNoValue &&
         float_graph_->value(node.inputs[slot]).kind == ValueKind::kConstant;
}

Status Shadow::Compile(const std::vector<Tensor>& inputs) {
  const Node& node = float_graph_->node(float_node_);
  Graph g(node.name);
  Node copy = node;
  compiled_shapes_.assign(node.inputs.size(), Shape{});
  for (size_t s = 0; s < node.inputs.size(); ++s) {
    if (node.inputs[s] == kNoValue) continue;
    const Value& v = float_graph_->value(node.inputs[s]);
    if (v.kind == ValueKind::kConstant) {
      OCTET_ASSIGN_OR_RETURN(copy.inputs[s], g.AddConstant(v.name, v.data));
      continue;
    }
    if (s >= inputs.size() || inputs[s].dtype() != DType::kF32) {
      return InvalidArgument("no f32 input {} ('{}') was given", s, v.name);
    }
    // The same value may feed two slots: add it once.
    const ValueId existing = g.FindValue(v.name);
    if (existing != kNoValue) {
      copy.inputs[s] = existing;
    } else {
      OCTET_ASSIGN_OR_RETURN(copy.inputs[s], g.AddInput(v.name, DType::kF32, inputs[s].shape()));
    }
    compiled_shapes_[s] = inputs[s].shape();
  }
  output_slots_.clear();
  for (size_t s = 0; s < node.outputs.size(); ++s) {
    if (node.outputs[s] == kNoValue) continue;
    OCTET_ASSIGN_OR_RETURN(copy.outputs[s], g.AddNodeValue(float_graph_->value(node.outputs[s]).name));
    output_slots_.push_back(static_cast<int>(s));
  }
  std::vector<ValueId> outs;
  for (int s : output_slots_) outs.push_back(copy.outputs[static_cast<size_t>(s)]);
  OCTET_RETURN_IF_ERROR(g.AddNode(std::move(copy)).status());
  for (ValueId id : outs) OCTET_RETURN_IF_ERROR(g.AddOutput(id));
  OCTET_ASSIGN_OR_RETURN(Executor e, Executor::Compile(g, *context_, *registry_));
  executor_ = std::make_unique<Executor>(std::move(e));
  return OkStatus();
}

Result<std::vector<Tensor>> Shadow::Run(const std::vector<Tensor>& inputs) {
  const Node& node = float_graph_->node(float_node_);
  auto where = [&] { return fmt::format("failed to run the float shadow of node '{}' ({})", node.name, node.op_type); };
  bool same = executor_ != nullptr;
  for (size_t s = 0; same && s < node.inputs.size(); ++s) {
    if (node.inputs[s] == kNoValue || IsConstantSlot(s)) continue;
    same = s < inputs.size() && inputs[s].shape() == compiled_shapes_[s];
  }
  if (!same) {
    if (Status st = Compile(inputs); !st.ok()) return st.WithContext(where());
  }
  std::vector<Tensor> feed;
  const Graph& g = executor_->graph();
  for (ValueId id : g.inputs()) {
    const std::string& name = g.value(id).name;
    for (size_t s = 0; s < node.inputs.size(); ++s) {
      if (node.inputs[s] != kNoValue && float_graph_->value(node.inputs[s]).name == name) {
        feed.push_back(inputs[s]);
        break;
      }
    }
  }
  auto outs = executor_->Run(feed);
  if (!outs.ok()) return outs.status().WithContext(where());
  std::vector<Tensor> by_slot(node.outputs.size());
  for (size_t i = 0; i < output_slots_.size(); ++i) by_slot[static_cast<size_t>(output_slots_[i])] = (*outs)[i];
  return by_slot;
}

}  // namespace octet
