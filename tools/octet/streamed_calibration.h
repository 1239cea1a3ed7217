// `octet quantize --calib` streamed (issue 19): static calibration reads its .npy files memory-mapped, one batch at a
// time (tools/octet/calib_source.h), so only the guard's held-back batches are held in memory, not the whole set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/calibrate.h"
#include "quant/prepare.h"
#include "tools/octet/calib_source.h"

namespace octet::cli {

// The calibration batches stay in the files; the guard's batches are loaded. The split is SplitGuardBatches'
// (numeric_suite/quantization_guard.h) on the batch count: with kGuardMinBatchesToHoldBack batches or more, the last
// fifth (at least one) is held back for the guard and the rest calibrates; with fewer, the guard checks the
// calibration set itself; without the guard, everything calibrates.
struct StreamedCalibration {
  CalibSource source;
  int64_t calibration_batches = 0;         // batches [0, calibration_batches) calibrate
  std::vector<std::vector<Tensor>> guard;  // the guard's batches (empty without the guard)
  std::string guard_source;                // "held-back" or "calibration", as SplitGuardBatches says
};

// Errors name --calib, the input and the file (CalibSource::Open), or say that the files hold no samples.
Result<StreamedCalibration> OpenStreamedCalibration(const std::vector<std::string>& specs, const Graph& graph,
                                                    const std::string& model, int64_t batch_size, bool with_guard);

// Batches [first, first + count) of the source, loaded (the guard's fixes re-calibrate from memory).
Result<std::vector<std::vector<Tensor>>> LoadBatches(const CalibSource& source, int64_t first, int64_t count);

// Calibrate over the calibration batches, one batch in memory at a time.
Status CalibrateStreamed(PreparedGraph& prepared, const Context& context, const StreamedCalibration& streamed,
                         const CalibrateOptions& options);

}  // namespace octet::cli
