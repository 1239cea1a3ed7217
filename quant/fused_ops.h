// Fused nodes: what the fusion pass (quant/fuse.h) produces and the float operators that run them.
//
// A fused node keeps its base operator's op type and inputs ("Conv", "Gemm", "MatMul", "Add"), moves to domain
// "octet" and carries attribute activation = "Relu": the activation is applied to the base result in place, as in
// PyTorch's intrinsic modules (ConvReLU2d, LinearReLU) and add_relu. Keeping the op type means a QConfigMapping
// entry for "Conv" applies to fused convs too, and the int8 operators read the activation as their clamp bounds
// (DESIGN.md §4: a fused ReLU is lo = zero point). A graph with fused nodes fails to compile with the plain float
// registry (no "octet" domain there) instead of silently dropping the activation: use QuantFloatRegistry().
#pragma once

#include <string_view>

#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"

namespace octet {

inline constexpr std::string_view kFusedDomain = "octet";
inline constexpr char kActivationAttribute[] = "activation";

// The base op types that can carry a fused activation.
bool CanFuseActivation(std::string_view op_type);
// Domain "octet", a base op type and an activation attribute.
bool IsFusedNode(const Node& node);
// The fused activation's name ("Relu"), or "" for a node without one.
std::string_view FusedActivation(const Node& node);

// Registers the fused float operators (domain "octet") into `registry`, each built on the base operator that
// `base` holds in the default domain (normally FloatOpRegistry()).
Status RegisterFusedFloatOps(const OpRegistry& base, OpRegistry& registry);

// The float operators of ops/float plus the fused ones: the registry for graphs after the quant passes.
OpRegistry QuantFloatRegistry();

}  // namespace octet
