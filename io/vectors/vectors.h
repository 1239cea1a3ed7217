// Per-layer test vectors for hardware bring-up (DESIGN.md §1.3, §8; docs/test_vectors.md): run an int8 graph once
// with per-node hooks and write, for every node, its int8 inputs, weights and bias with their qparams, the int32
// accumulators, the requantization parameters and the outputs as .npy files with a JSON manifest; and replay such a
// directory through the scalar reference kernels (ops/reference), bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

// Version of manifest.json's layout (docs/test_vectors.md); bumped on any incompatible change.
inline constexpr int kVectorsSchemaVersion = 1;

struct VectorsOptions {
  // Nodes to record, by name; empty = every node that runs (nodes folded at Compile never run and have none).
  std::vector<std::string> nodes;
  // Replace an existing non-empty `dir` (otherwise refused).
  bool force = false;
  // Written into the manifest as "model" (usually the .octet path as given).
  std::string model_name;
};

struct VectorsSummary {
  std::vector<std::string> nodes;         // recorded nodes, graph order
  std::vector<std::string> not_replayed;  // recorded nodes whose op has no reference replay (inputs/outputs only)
  int64_t files = 0;                      // .npy files written
};

// Runs `graph` (a quantized graph: QuantizedGraphRegistry()) on `inputs` (every graph input exactly once, by name,
// of its declared dtype and a shape its declared dims allow) and writes the vectors of the selected nodes into `dir`
// (layout in docs/test_vectors.md). Before `dir` appears, every recorded node is replayed with ReplayVectors' rules
// from the files just written; a disagreement between octet's kernels and the reference is an Internal error.
// The files are written into a fresh temporary folder beside `dir`, which is renamed to `dir` at the end: `dir` is
// never half written, and on any failure it is left as it was. An existing non-empty `dir` is refused unless
// options.force. Errors name what is wrong: an unknown or missing input, a wrong dtype or shape, an unknown node
// name, a folded node.
Result<VectorsSummary> WriteVectors(const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    const std::string& dir, const Context& context, const VectorsOptions& options = {});

struct ReplayReport {
  std::vector<std::string> replayed;  // nodes recomputed and equal, manifest order
  std::vector<std::string> skipped;   // nodes recorded without a reference replay
  int64_t elements = 0;               // accumulator and output elements compared
};

// Reads `dir`/manifest.json and every file it names, recomputes each node with the scalar reference kernels from
// the recorded inputs, weights and parameters, and compares accumulators, derived parameters and outputs with ==.
// The first mismatch is a DataLoss error naming the node, the tensor, the element index, the expected (recorded)
// and the reference value. A malformed manifest, a missing file or one whose dtype or shape differs from the
// manifest is an error naming it.
Result<ReplayReport> ReplayVectors(const std::string& dir);

}  // namespace octet
