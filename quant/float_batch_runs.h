// Runs a float graph over calibration batches for the accuracy passes (SmoothQuant, bias correction, AdaRound), which
// each measure a copy of the model with extra outputs: one compiled executor per run of batches with equal input
// shapes, not one per batch.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

// Calls visit(b, outputs of `graph` on batch b) for every batch, on the float and fused operators. A batch gives the
// graph's inputs in order (extra tensors are ignored). A failed run names `pass` and the batch.
Status ForEachFloatBatchRun(const Graph& graph, std::span<const std::vector<Tensor>> batches, const Context& context,
                            std::string_view pass,
                            const std::function<Status(size_t b, const std::vector<Tensor>& outputs)>& visit);

}  // namespace octet
