// Shadow (torch.ao.ns._numeric_suite.Shadow): the float twin of one int8 node, run on that node's dequantized
// inputs, so its error is measured without the error of the layers before it.
#pragma once

#include <memory>
#include <vector>

#include "core/context.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

class Shadow {
 public:
  // The node `float_node` of `float_graph` (a fused graph: FloatReferenceGraph()), compiled with `registry`
  // (QuantFloatRegistry() for fused graphs) on first use. All three arguments must outlive the Shadow.
  Shadow(const Graph& float_graph, int float_node, const OpRegistry& registry, const Context& context);

  // Whether input `slot` of the float node is a constant (its own f32 weight is used, not the int8 one).
  bool IsConstantSlot(size_t slot) const;
  // Runs the float node on `inputs`, one f32 tensor per input slot (slots that are constants or omitted are
  // ignored and may be empty tensors). Returns one tensor per output slot (empty for omitted outputs). Recompiles
  // when the input shapes change. Errors name the node.
  Result<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);

 private:
  Status Compile(const std::vector<Tensor>& inputs);

  const Graph* float_graph_;
  int float_node_;
  const OpRegistry* registry_;
  const Context* context_;
  std::vector<Shape> compiled_shapes_;
  std::unique_ptr<Executor> executor_;
  std::vector<int> output_slots_;  // graph output i = node output slot output_slots_[i]
};

}  // namespace octet
