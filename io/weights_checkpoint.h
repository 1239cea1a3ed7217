// Training checkpoints: a graph's constants (weights, biases, BatchNorm statistics, shape constants) as a
// directory of .npy files plus a JSON manifest, replaced as a whole so a reader never sees half a checkpoint.
//
// The stand-in for the `.octet` model format until it exists: `octet train` writes one, and LoadWeightsCheckpoint
// puts the weights back into the same graph (the ONNX model it was trained from). Layout:
//   DIR/manifest.json   {"format": "octet-weights-checkpoint", "version": 1, "graph": NAME,
//                        "tensors": [{"name": VALUE NAME, "file": "t0000.npy", "dtype": "f32", "shape": [...]}...],
//                        "metadata": {KEY: VALUE...}}
//   DIR/t0000.npy ...   one file per constant, in value order (file names never come from value names)
// The directory is built beside DIR under a temporary name and swapped in with one atomic rename (RENAME_EXCHANGE
// when DIR already exists, after which the old one is removed).
#pragma once

#include <map>
#include <string>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

// Writes every constant of `graph` with string `metadata` (epoch, loss, options) into the directory `dir`.
Status WriteWeightsCheckpoint(const Graph& graph, const std::string& dir,
                              const std::map<std::string, std::string>& metadata = {});

// Replaces the data of every constant named in the checkpoint at `dir`; each must exist in `graph` with the same
// dtype and shape. Returns the number of tensors loaded. Errors name the directory and the tensor.
Result<int> LoadWeightsCheckpoint(const std::string& dir, Graph& graph);

}  // namespace octet
