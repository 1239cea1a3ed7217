// VerifyGraph: the structural rules every Graph must satisfy before it is compiled, passed or saved.
#pragma once

#include "core/graph.h"
#include "core/status.h"

namespace octet {

// Checks, failing with an error that names the node and the value concerned:
//  - names: every node has a non-empty name made of printable characters, unique in the graph; value names are
//    non-empty and unique (Graph keeps them so), with no control characters; hierarchical names are dot-separated
//    ("layer1.0.conv1"), which is a convention the verifier does not impose on imported names;
//  - values: each node output is a kNode value produced by exactly one node; inputs and constants are produced by
//    no node; a constant has data of its declared dtype and shape; an input has a shape;
//  - order: every node input is a graph input, a constant, or the output of an earlier node (nodes in topological
//    order; a use before the producer is reported as such, a cycle as a cycle);
//  - graph inputs and outputs: at least one output; each output is defined; input ids are kInput values.
// It does not check operator semantics (arity, attributes, shapes): the executor's shape inference does.
Status VerifyGraph(const Graph& graph);

}  // namespace octet
