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

// The training set and the optional test set (test_y empty when `test_data` is empty).
struct TrainingData {
  Tensor x;
  std::vector<int64_t> y;
  Tensor test_x;
  std::vector<int64_t> test_y;
};

// --data/--labels and, when given, --test-data/--test-labels, read with ReadData and ReadLabels.
Result<TrainingData> ReadTrainingData(const std::string& data, const std::string& labels, const std::string& test_data,
                                      const std::string& test_labels, const Graph& graph, const std::string& command);

}  // namespace octet::cli
