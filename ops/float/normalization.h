// BatchNormalization (inference: y = (x - mean) / sqrt(var + eps) * scale + B per channel, folded at Prepare into
// y = a[c] x + b[c] when the statistics are constant) and LayerNormalization (opset 17: over the dims from `axis`
// on, y = (x - mean) / sqrt(var + eps) * Scale + B with the population variance, optional Mean and InvStdDev
// outputs).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterNormalizationOps(OpRegistry& registry);

}  // namespace octet::float_ops
