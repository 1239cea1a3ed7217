// Backward of Gather: the gradient of the data is dY scattered back and added up (an index read twice gets both
// gradients, as PyTorch's index_select / embedding backward); the indices get none.
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterGatherBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
