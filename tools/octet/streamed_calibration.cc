// `octet quantize --calib` streamed: the guard split on batch indices, and calibration batch by batch.
#include "tools/octet/streamed_calibration.h"

#include <algorithm>
#include <utility>

#include "numeric_suite/quantization_guard.h"

namespace octet::cli {

Result<StreamedCalibration> OpenStreamedCalibration(const std::vector<std::string>& specs, const Graph& graph,
                                                    const std::string& model, int64_t batch_size, bool with_guard) {
  ReturnLargeBuffersToKernel();
  OCTET_ASSIGN_OR_RETURN(CalibSource source, CalibSource::Open(specs, graph, model, batch_size, "--calib"));
  if (source.num_samples() == 0) return InvalidArgument("--calib: the calibration files hold no samples");
  const int64_t n = source.num_batches();
  StreamedCalibration s{std::move(source), n, {}, "calibration"};
  if (!with_guard) return s;
  int64_t guard_first = 0;
  if (n >= static_cast<int64_t>(kGuardMinBatchesToHoldBack)) {
    const int64_t held = std::max<int64_t>(1, n / 5);
    s.calibration_batches = n - held;
    guard_first = n - held;
    s.guard_source = "held-back";
  }
  OCTET_ASSIGN_OR_RETURN(s.guard, LoadBatches(s.source, guard_first, n - guard_first));
  return s;
}

Result<std::vector<std::vector<Tensor>>> LoadBatches(const CalibSource& source, int64_t first, int64_t count) {
  std::vector<std::vector<Tensor>> batches;
  batches.reserve(static_cast<size_t>(count));
  for (int64_t b = first; b < first + count; ++b) {
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> batch, source.Batch(b));
    batches.push_back(std::move(batch));
  }
  return batches;
}

Status CalibrateStreamed(PreparedGraph& prepared, const Context& context, const StreamedCalibration& streamed,
                         const CalibrateOptions& options) {
  return Calibrate(
      prepared, context, streamed.calibration_batches, [&](int64_t b) { return streamed.source.Batch(b); }, options);
}

}  // namespace octet::cli
