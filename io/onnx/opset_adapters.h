// Opset adapters: rewrite the nodes of a model written for any default-domain
// opset from 7 to 21 into the one form octet's operators read (the opset 13-17
// schemas), before the graph is imported. Attributes that later became inputs
// become constant inputs (initializers), inputs that later became attributes
// are read back from constants, Softmax's old coercion to 2-D becomes Flatten +
// Softmax + Reshape; a difference that is not adapted is refused naming the
// node, op, opset and difference. Opsets 1 to 6 are read only for ops unchanged
// since then.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

#include "core/op_registry.h"
#include "core/status.h"

namespace octet::onnx_import {

// The opsets whose operators are all read (older ones: only the ops whose
// schema opset 7 kept).
inline constexpr int64_t kOldestAdaptedOpset = 7;

// Rewrites `graph` (the main graph of a model importing the default domain at
// `opset`) in place. Nodes of other domains are left alone. Ops the registry
// lacks are left for the importer to list as unsupported, except that Upsample
// becomes Resize when the registry has Resize. Nodes of opsets 13 to 17 are
// left as they are.
Status AdaptToOctetOpset(onnx::GraphProto &graph, int64_t opset, const OpRegistry &registry);

}  // namespace octet::onnx_import
