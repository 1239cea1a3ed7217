// If and Loop: operators that run subgraphs (Node::subgraphs) with octet's
// executor.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// The attribute that counts a control-flow node's trailing inputs holding
// outer-scope values (the ONNX importer sets it): the same values, in the same
// order, are the trailing inputs of each of the node's subgraphs.
inline constexpr const char* kOuterInputsAttribute = "octet_outer_inputs";

// If: input 0 is the condition (a one-element bool, as u8), read when the node
// is compiled (the executor compiles per run when it is computed from graph
// inputs); the branch it picks (then_branch or else_branch) is compiled for the
// outer values' dtypes and shapes and run by the node's kernel. A branch whose
// output shapes depend on data is run at compile time instead, for that run's
// data.
//
// Loop: inputs M (the trip count, s32, optional), cond (u8, optional), the
// loop-carried initial values, then the outer values; body inputs (iteration
// number s32, cond u8, carried..., outer...) and outputs (cond, carried...,
// scan outputs...). Since the scan outputs' length depends on the data, the
// loop is run when the node is compiled, for each run's data, and its outputs
// become that compile's constants.
Status RegisterControlFlowOps(OpRegistry& registry);

}  // namespace octet::float_ops
