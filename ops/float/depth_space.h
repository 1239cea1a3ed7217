// DepthToSpace (DCR and CRD modes) and SpaceToDepth: NCHW rearrangements between channels and blocksize x
// blocksize spatial blocks, for every dtype octet holds (quantized codes pass through with their qparams).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterDepthSpaceOps(OpRegistry& registry);

}  // namespace octet::float_ops
