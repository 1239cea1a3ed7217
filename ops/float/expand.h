// Operators that repeat their input: Expand (broadcast to a shape) and Tile (repeat along each axis), for every
// dtype octet holds.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// Expand's output shape is numpy's broadcast of the input shape and the `shape` input (so a 1 in `shape` keeps the
// input's dim, and `shape` may have a lower rank). Tile's `repeats` has one value >= 0 per input axis. Both inputs
// must be known at compile time (constants, or computed from constants such as Shape), since they fix the output
// shape. Quantized codes pass through with their qparams.
Status RegisterExpandOps(OpRegistry& registry);

}  // namespace octet::float_ops
