// Transpose (any dtype): output dim i is input dim perm[i]; perm defaults to reversing the dims.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterTransposeOps(OpRegistry& registry);

}  // namespace octet::float_ops
