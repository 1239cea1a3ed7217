// ForEachFloatBatchRun: compile once per run of equal input shapes, run, hand the outputs to the pass.
#include "quant/float_batch_runs.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "core/executor.h"
#include "quant/fused_ops.h"

namespace octet {

Status ForEachFloatBatchRun(const Graph& graph, std::span<const std::vector<Tensor>> batches, const Context& context,
                            std::string_view pass,
                            const std::function<Status(size_t b, const std::vector<Tensor>& outputs)>& visit) {
  const OpRegistry registry = QuantFloatRegistry();
  std::optional<Executor> exec;
  std::vector<Shape> compiled_shapes;
  for (size_t b = 0; b < batches.size(); ++b) {
    std::vector<Shape> shapes;
    for (size_t k = 0; k < batches[b].size() && k < graph.inputs().size(); ++k) shapes.push_back(batches[b][k].shape());
    if (!exec.has_value() || shapes != compiled_shapes) {
      CompileOptions co;
      for (size_t k = 0; k < shapes.size(); ++k)
        co.input_shapes.emplace_back(graph.value(graph.inputs()[k]).name, shapes[k]);
      exec.reset();
      OCTET_ASSIGN_OR_RETURN(Executor compiled, Executor::Compile(graph, context, registry, co));
      exec.emplace(std::move(compiled));
      compiled_shapes = std::move(shapes);
    }
    auto outputs = exec->Run(batches[b]);
    if (!outputs.ok()) return outputs.status().WithContext(fmt::format("{}, calibration batch {}", pass, b));
    OCTET_RETURN_IF_ERROR(visit(b, *outputs));
  }
  return OkStatus();
}

}  // namespace octet
