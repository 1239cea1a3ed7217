// Calibrate: runs calibration batches through the prepared (fused) float graph and feeds every observed activation
// to its observer, through the executor's after-node hooks (torch.ao's "run the prepared model on data"). Graph
// inputs are observed from the batches themselves; weights were observed by Prepare. Afterwards
// PreparedGraph::CalculateQParams gives the qparams of every observed value.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "core/context.h"
#include "core/executor.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/prepare.h"
#include "quant/progress.h"

namespace octet {

struct CalibrateOptions {
  // Called after each batch; unset: nothing is reported (TerminalProgress draws a line on stderr).
  ProgressFn progress;
};

// One batch: one tensor per graph input, in graph input order. `executor` must be compiled from prepared.graph()
// (with QuantFloatRegistry() for fused graphs); fails otherwise, on an observer error (naming value and node) or on
// a non-f32 observed value.
Status Calibrate(PreparedGraph& prepared, const Executor& executor, std::span<const std::vector<Tensor>> batches,
                 const CalibrateOptions& options = {});

// The same, compiling the graph itself with QuantFloatRegistry() for each distinct set of batch shapes.
Status Calibrate(PreparedGraph& prepared, const Context& context, std::span<const std::vector<Tensor>> batches,
                 const CalibrateOptions& options = {});

// Batch `b` of a stream (0 <= b < num_batches), made when asked: calibration from files holds one batch at a time.
using BatchFn = std::function<Result<std::vector<Tensor>>(int64_t b)>;

// The same over `num_batches` batches fetched one at a time, compiling once per run of equal batch shapes.
Status Calibrate(PreparedGraph& prepared, const Context& context, int64_t num_batches, const BatchFn& batch,
                 const CalibrateOptions& options = {});

// Splits `samples` along axis 0 into batches of `batch_size` (the last may be smaller): how a calibration file
// holding samples along axis 0 becomes batches.
Result<std::vector<Tensor>> SplitBatches(const Tensor& samples, int64_t batch_size);

}  // namespace octet
