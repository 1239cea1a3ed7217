// FloatOpRegistry: the registry of every float operator in ops/float, built on request (no static registration).
#pragma once

#include "core/op_registry.h"
#include "core/status.h"

namespace octet {

// Registers every operator of ops/float into `registry` (fails if one is already there).
Status RegisterFloatOps(OpRegistry& registry);

// A registry holding exactly the float operators.
OpRegistry FloatOpRegistry();

}  // namespace octet
