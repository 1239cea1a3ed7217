// Loading and compiling .octet models with the operators of quantized graphs.
#include "io/runtime/octet_runtime.h"

#include "ops/float/float_fusion.h"
#include "ops/int8/nhwc_layout.h"
#include "quant/quantized_registry.h"

namespace octet {

Result<OctetRuntime> OctetRuntime::Load(const std::string& path, const Context& context,
                                        const CompileOptions& options) {
  OCTET_ASSIGN_OR_RETURN(OctetModel model, ReadOctetFile(path));
  return Compile(std::move(model), path, context, options);
}

Result<OctetRuntime> OctetRuntime::Compile(OctetModel model, const std::string& name, const Context& context,
                                           const CompileOptions& options) {
  // Operators keep no reference to the registry after Compile, so a temporary is enough.
  const OpRegistry registry = QuantizedGraphRegistry();
  // int8 activations stay NHWC between the int8 ops that can read them (ops/int8/nhwc_layout.h): graph outputs keep
  // their layout, so results are byte-identical and only the speed changes.
  // Float Relu/Clip after a float Conv/Gemm run in its store (ops/float/float_fusion.h), also bit-identical.
  Result<Executor> executor = Executor::Compile(float_ops::FuseFloatActivations(int8_ops::PlanNhwcLayout(model.graph)),
                                                context, registry, options);
  if (!executor.ok()) {
    return executor.status().WithContext(fmt::format("failed to load .octet model '{}'", name));
  }
  return OctetRuntime(std::move(model), std::move(executor).value());
}

}  // namespace octet
