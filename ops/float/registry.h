// FloatOpRegistry: the registry of every float operator in ops/float, built on request (no static registration).
#pragma once

#include <utility>

#include "core/float_op_table.h"
#include "core/op_registry.h"
#include "core/status.h"

namespace octet {

// Registers every operator of ops/float into `registry` (fails if one is already there).
Status RegisterFloatOps(OpRegistry& registry);

// A registry holding exactly the float operators.
OpRegistry FloatOpRegistry();

// Registers `prepare` as float operator `op`: the op files name their operators by id, never by string.
inline Status RegisterFloatOp(OpRegistry& registry, FloatOp op, OpPrepareFn prepare) {
  return registry.Register(kFloatDomain, FloatOpName(op), std::move(prepare));
}

}  // namespace octet
