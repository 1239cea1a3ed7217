// Calibration through executor hooks (see calibrate.h).
#include "quant/calibrate.h"

#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "quant/fused_ops.h"

namespace octet {

namespace {

Status ObserveInto(PreparedGraph& prepared, ValueId v, const Tensor& t, const std::string& node_name) {
  const int s = prepared.slot_of(v);
  if (s < 0) return OkStatus();
  const std::string& name = prepared.graph().value(v).name;
  if (t.dtype() != DType::kF32) {
    return InvalidArgument("failed to observe value '{}' (output of '{}'): observers need f32, got {}", name,
                           node_name, DTypeName(t.dtype()));
  }
  Status st = prepared.mutable_slots()[static_cast<size_t>(s)].observer->Observe(t, name);
  if (!st.ok()) return st.WithContext(fmt::format("calibrating node '{}'", node_name));
  return OkStatus();
}

Status CheckSameGraph(const Graph& a, const Graph& b) {
  bool same = a.num_nodes() == b.num_nodes() && a.num_values() == b.num_values();
  for (int i = 0; same && i < a.num_nodes(); ++i) same = a.node(i).name == b.node(i).name;
  if (!same) {
    return InvalidArgument("failed to calibrate graph '{}': the executor was compiled from another graph ('{}'); "
                           "compile PreparedGraph::graph()",
                           b.name(), a.name());
  }
  return OkStatus();
}

// A batch whose shape the input's declared shape rejects: a fixed batch size (models exported at batch 1) is the
// common case, and the fix is the batch size the calibration samples are split into.
Status CheckDeclaredShape(const Graph& g, ValueId input, const Shape& got, int64_t batch) {
  const Value& v = g.value(input);
  if (!v.shape.has_value()) return OkStatus();
  const Shape& declared = *v.shape;
  bool rest_agrees = declared.rank() == got.rank();
  for (int d = 1; rest_agrees && d < got.rank(); ++d) {
    rest_agrees = declared.dim(d) == kUnknownDim || declared.dim(d) == got.dim(d);
  }
  if (!rest_agrees) {
    return InvalidArgument(
        "failed to calibrate graph '{}': input '{}' is declared {}, but calibration batch {} has shape {}; the "
        "calibration samples for '{}' (--calib {}=FILE.npy, samples along axis 0) must have the shape of one sample",
        g.name(), v.name, declared, batch, got, v.name, v.name);
  }
  if (got.rank() > 0 && declared.dim(0) != kUnknownDim && declared.dim(0) != got.dim(0)) {
    const int64_t fixed = declared.dim(0);
    return InvalidArgument(
        "failed to calibrate graph '{}': input '{}' is declared {} with a fixed batch of {}, but calibration batch {} "
        "has {} samples; calibrate in batches of {} (--calib-batch {}{})",
        g.name(), v.name, declared, fixed, batch, got.dim(0), fixed, fixed,
        fixed > 1 ? fmt::format(", and a multiple of {} samples", fixed) : "");
  }
  return OkStatus();
}

// The after-node hook that feeds every observed activation to its observer.
RunOptions ObservingRun(PreparedGraph& prepared) {
  RunOptions run;
  run.after_node.push_back([&prepared](const NodeCall& call) -> Status {
    for (size_t k = 0; k < call.node.outputs.size(); ++k) {
      const ValueId v = call.node.outputs[k];
      if (v == kNoValue || prepared.slot_of(v) < 0) continue;
      // Observers take tensors; the view is only valid during the hook, so it is copied.
      OCTET_ASSIGN_OR_RETURN(Tensor t, call.outputs[k].ToTensor());
      OCTET_RETURN_IF_ERROR(ObserveInto(prepared, v, t, call.node.name));
    }
    return OkStatus();
  });
  return run;
}

// Batch `b`: the graph inputs observed from the batch, then one run observing every activation.
Status CalibrateBatch(PreparedGraph& prepared, const Executor& executor, const RunOptions& run,
                      const std::vector<Tensor>& batch, int64_t b) {
  const Graph& g = prepared.graph();
  if (batch.size() != g.inputs().size()) {
    return InvalidArgument("failed to calibrate graph '{}': batch {} has {} tensors, the graph has {} inputs",
                           g.name(), b, batch.size(), g.inputs().size());
  }
  for (size_t k = 0; k < batch.size(); ++k) {
    OCTET_RETURN_IF_ERROR(ObserveInto(prepared, g.inputs()[k], batch[k], "(graph input)"));
  }
  auto out = executor.Run(batch, run);
  if (!out.ok()) return out.status().WithContext(fmt::format("calibration batch {}", b));
  return OkStatus();
}

}  // namespace

Status Calibrate(PreparedGraph& prepared, const Executor& executor, std::span<const std::vector<Tensor>> batches,
                 const CalibrateOptions& options) {
  OCTET_RETURN_IF_ERROR(CheckSameGraph(executor.graph(), prepared.graph()));
  const RunOptions run = ObservingRun(prepared);
  const int64_t total = static_cast<int64_t>(batches.size());
  for (int64_t b = 0; b < total; ++b) {
    OCTET_RETURN_IF_ERROR(CalibrateBatch(prepared, executor, run, batches[static_cast<size_t>(b)], b));
    if (options.progress) options.progress(b + 1, total);
  }
  return OkStatus();
}

Status Calibrate(PreparedGraph& prepared, const Context& context, std::span<const std::vector<Tensor>> batches,
                 const CalibrateOptions& options) {
  const BatchFn at = [batches](int64_t b) -> Result<std::vector<Tensor>> {
    return batches[static_cast<size_t>(b)];  // tensors share storage: no copy
  };
  return Calibrate(prepared, context, static_cast<int64_t>(batches.size()), at, options);
}

Status Calibrate(PreparedGraph& prepared, const Context& context, int64_t num_batches, const BatchFn& batch_fn,
                 const CalibrateOptions& options) {
  const OpRegistry registry = QuantFloatRegistry();
  const Graph& g = prepared.graph();
  // A run of batches with equal shapes shares one compiled executor.
  std::optional<Executor> exec;
  std::vector<Shape> compiled_shapes;
  const RunOptions run = ObservingRun(prepared);
  for (int64_t b = 0; b < num_batches; ++b) {
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> batch, batch_fn(b));
    if (batch.size() != g.inputs().size()) {
      return InvalidArgument("failed to calibrate graph '{}': batch {} has {} tensors, the graph has {} inputs",
                             g.name(), b, batch.size(), g.inputs().size());
    }
    std::vector<Shape> shapes;
    for (const Tensor& t : batch) shapes.push_back(t.shape());
    if (!exec.has_value() || shapes != compiled_shapes) {
      CompileOptions co;
      for (size_t k = 0; k < batch.size(); ++k) {
        OCTET_RETURN_IF_ERROR(CheckDeclaredShape(g, g.inputs()[k], batch[k].shape(), b));
        co.input_shapes.emplace_back(g.value(g.inputs()[k]).name, batch[k].shape());
      }
      exec.reset();
      OCTET_ASSIGN_OR_RETURN(Executor compiled, Executor::Compile(g, context, registry, co));
      exec.emplace(std::move(compiled));
      compiled_shapes = std::move(shapes);
    }
    OCTET_RETURN_IF_ERROR(CalibrateBatch(prepared, *exec, run, batch, b));
    if (options.progress) options.progress(b + 1, num_batches);
  }
  return OkStatus();
}

Result<std::vector<Tensor>> SplitBatches(const Tensor& samples, int64_t batch_size) {
  if (batch_size <= 0) return InvalidArgument("failed to split calibration samples: batch size must be > 0, got {}",
                                              batch_size);
  if (samples.shape().rank() < 1) {
    return InvalidArgument("failed to split calibration samples: need samples along axis 0, got a scalar");
  }
  const int64_t n = samples.shape().dim(0);
  const size_t row_bytes = n == 0 ? 0 : samples.SizeBytes() / static_cast<size_t>(n);
  std::vector<Tensor> out;
  for (int64_t start = 0; start < n; start += batch_size) {
    const int64_t rows = std::min(batch_size, n - start);
    std::vector<int64_t> dims = samples.shape().dims();
    dims[0] = rows;
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(samples.dtype(), Shape(dims)));
    if (t.SizeBytes() > 0) {
      std::memcpy(t.raw_data(), static_cast<const std::byte*>(samples.raw_data()) + static_cast<size_t>(start) * row_bytes,
                  t.SizeBytes());
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace octet
