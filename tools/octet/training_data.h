// Training data for `octet train` and `octet qat`: inputs X (f32 .npy, reshaped to the model input) and integer
// labels Y.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::cli {

// Labels as int64 from an integer .npy [N] (s32, u8 or s8).
Result<std::vector<int64_t>> ReadLabels(const std::string& path);

// X as f32, reshaped to the model input [N, dims...] when the input's per-sample dims are all known and the sizes
// agree. `command` names the command in errors ("octet train").
Result<Tensor> ReadData(const std::string& path, const Graph& graph, const std::string& command);

}  // namespace octet::cli
