// InstanceNormalization: each (n, c) plane normalised by its own mean and variance, then scaled and shifted per
// channel: y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], for f32 inputs of rank >= 3.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterInstanceNormOps(OpRegistry& registry);

}  // namespace octet::float_ops
