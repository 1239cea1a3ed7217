// The float fusion pass: folds a Relu or Clip (ReLU6 and the like) into the float Conv or Gemm that produces its
// input, so the activation is applied in the convolution's or product's store instead of a second pass over memory
// (MobileNetV2's 35 Clip nodes were ~11% of its float time, ResNet-18's Relu nodes ~5%).
//
// The pass records the activation on the producer as attributes and removes the activation node; the producer then
// writes the activation node's output value:
//   fused_activation   "Relu" or "Clip" (the op's name)
//   fused_min, fused_max   Clip's bounds (absent: unbounded on that side)
// A node is fused only when the producer's output feeds nothing else and is not a graph output, the Clip's bounds are
// constant f32 scalars with min <= max, and the producer is a 1-D/2-D Conv with constant weights or a Gemm. The
// activation is the same expression on the same floats (ops/float/ukernels/fused_activation.h), so outputs are
// bit-identical to the graph without the pass.
//
// Hooks see one node where there were two, so callers that inspect every node's output (the numeric suite, loggers,
// calibration) compile the graph without this pass; the octet command applies it to `run` and `bench model`, and the
// .octet runtime to what it loads.
#pragma once

#include "core/graph.h"
#include "core/graph_attribute.h"
#include "core/status.h"
#include "ops/float/ukernels/fused_activation.h"

namespace octet::float_ops {

inline constexpr char kFusedActivationAttribute[] = "fused_activation";
inline constexpr char kFusedMinAttribute[] = "fused_min";
inline constexpr char kFusedMaxAttribute[] = "fused_max";

// A copy of `graph` with every fusable Relu / Clip folded into its producer; `fused` (when non-null) gets how many.
Graph FuseFloatActivations(const Graph& graph, int* fused = nullptr);

// The activation recorded on a node by the pass (Kind::kNone when there is none); an error names a bad attribute.
Result<FusedActivation> ReadFusedActivation(const AttributeMap& attributes);

// What a fused operator appends to its kernel name: "+relu", "+clip" or "".
const char* ActivationSuffix(const FusedActivation& activation);

}  // namespace octet::float_ops
