// Runs one node of a graph on given tensors with an operator registry (ops/float/registry.h): the forward that
// training (a tape records its inputs and outputs) and the finite-difference tests differentiate. Inputs whose
// `known` flag is set are shown to the operator's Prepare as compile-time constants (a Reshape's shape, Clip's
// bounds); the others, weights being trained included, as runtime data, so no operator caches packed weights.
#pragma once

#include <span>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::float_ops {

// One output tensor per output slot of `node`. `inputs` has one tensor per input slot (an omitted optional input
// is given as a default-constructed Tensor and flagged absent by `present`). Errors name the node.
Result<std::vector<Tensor>> RunNode(const OpRegistry& registry, const Node& node, std::span<const Tensor> inputs,
                                    std::span<const bool> present, std::span<const bool> known,
                                    const Context& context);

}  // namespace octet::float_ops
