// The minimal runtime: load a .octet model and compile it for a context with the operators of quantized graphs
// (QuantizedGraphRegistry: float, fused float and int8 operators), without ONNX import or the quantization flows.
#pragma once

#include <string>

#include "core/context.h"
#include "core/executor.h"
#include "core/status.h"
#include "io/octet_file.h"

namespace octet {

// A loaded model and its executor, ready to Run. The context passed to Load must outlive the runtime.
class OctetRuntime {
 public:
  // Reads `path` (ReadOctetFile) and compiles its graph (Executor::Compile with QuantizedGraphRegistry(), int8
  // activations planned NHWC between int8 ops by ops/int8/nhwc_layout.h, so executor() runs that plan). Compile
  // errors are prefixed "failed to load .octet model '<path>'".
  static Result<OctetRuntime> Load(const std::string& path, const Context& context,
                                   const CompileOptions& options = {});
  // The same for a model already in memory; `name` names it in errors.
  static Result<OctetRuntime> Compile(OctetModel model, const std::string& name, const Context& context,
                                      const CompileOptions& options = {});

  const Graph& graph() const { return model_.graph; }
  const OctetMetadata& metadata() const { return model_.metadata; }
  const Executor& executor() const { return executor_; }
  // Executor::RunNamed: inputs by graph input name, outputs in graph output order.
  Result<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& inputs) const {
    return executor_.RunNamed(inputs);
  }

 private:
  OctetRuntime(OctetModel model, Executor executor) : model_(std::move(model)), executor_(std::move(executor)) {}
  OctetModel model_;
  Executor executor_;
};

}  // namespace octet
