// Batches for every graph input from NAME=FILE.npy options (`--calib` of `octet quantize`, `--calib` and `--input`
// of `octet sensitivity`): each file holds samples along axis 0 and is split into batches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::cli {

// What the files are for, in error messages.
struct BatchFilesUse {
  const char* option;   // "--calib"
  const char* purpose;  // "static quantization needs calibration data"
};

// The batches: each `specs` file (NAME=FILE.npy, one per graph input) split along axis 0 into batches of
// `batch_size` (the last may be smaller), zipped in graph input order (one tensor per input in each batch).
// Errors name the option, the input and the file: an input without a file, a name given twice or naming no input
// of `model`, an unreadable file, files holding different numbers of samples.
Result<std::vector<std::vector<Tensor>>> BatchesFromFiles(const std::vector<std::string>& specs, const Graph& graph,
                                                          const std::string& model, int64_t batch_size,
                                                          const BatchFilesUse& use);

}  // namespace octet::cli
