// Float kernels of fused nodes: the base operator's kernel followed by the activation in place.
#include "quant/fused_ops.h"

#include <memory>

#include "core/float_op_table.h"
#include "ops/float/registry.h"

namespace octet {

namespace {

constexpr FloatOp kFusableOps[] = {FloatOp::kConv, FloatOp::kGemm, FloatOp::kMatMul, FloatOp::kAdd};

Result<PreparedOp> PrepareFused(const OpPrepareFn& base, const OpPrepareArgs& args) {
  const Node& node = args.node;
  OCTET_ASSIGN_OR_RETURN(std::string activation, node.attributes.GetString(kActivationAttribute));
  if (activation != FloatOpName(FloatOp::kRelu)) {
    return Unimplemented("fused activation '{}' is not supported (only Relu)", activation);
  }
  // The base operator sees the node as it was before fusion.
  Node unfused = node;
  unfused.domain = "";
  unfused.attributes.Erase(kActivationAttribute);
  OCTET_ASSIGN_OR_RETURN(PreparedOp op, base(OpPrepareArgs{unfused, args.inputs, args.context,
                                                           args.max_output_elements, args.output_qparams,
                                                           args.output_names}));
  if (!op.constant_outputs.empty()) {
    return Unimplemented("fused activation on an operator with constant outputs");
  }
  if (op.outputs.empty() || op.outputs[0].dtype != DType::kF32) {
    return InvalidArgument("fused activation '{}' needs an f32 first output", activation);
  }
  std::shared_ptr<const OpKernel> inner(std::move(op.kernel));
  op.kernel = MakeKernel([inner](const OpRunArgs& r) -> Status {
    OCTET_RETURN_IF_ERROR(inner->Run(r));
    float* y = r.outputs[0].data<float>();
    const int64_t n = r.outputs[0].NumElements();
    // The same expression as the float Relu operator, so fused and unfused graphs agree bit for bit.
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
    return OkStatus();
  });
  op.kernel_name += "+relu";
  return op;
}

}  // namespace

bool CanFuseActivation(std::string_view op_type) {
  for (FloatOp op : kFusableOps) {
    if (IsFloatOp(op_type, op)) return true;
  }
  return false;
}

bool IsFusedNode(const Node& node) {
  return node.domain == kFusedDomain && CanFuseActivation(node.op_type) && node.attributes.Has(kActivationAttribute);
}

std::string_view FusedActivation(const Node& node) {
  if (!IsFusedNode(node)) return {};
  const Attribute* a = node.attributes.Find(kActivationAttribute);
  return a->type() == AttrType::kString ? std::string_view(a->s()) : std::string_view();
}

Status RegisterFusedFloatOps(const OpRegistry& base, OpRegistry& registry) {
  for (FloatOp id : kFusableOps) {
    const std::string_view op = FloatOpName(id);
    const OpPrepareFn* fn = base.Find("", op);
    if (fn == nullptr) return NotFound("no float operator '{}' to build the fused '{}.{}' on", op, kFusedDomain, op);
    OCTET_RETURN_IF_ERROR(registry.Register(kFusedDomain, op, [fn = *fn](const OpPrepareArgs& args) {
      return PrepareFused(fn, args);
    }));
  }
  return OkStatus();
}

OpRegistry QuantFloatRegistry() {
  OpRegistry registry = FloatOpRegistry();
  const OpRegistry base = FloatOpRegistry();
  const Status status = RegisterFusedFloatOps(base, registry);
  OCTET_CHECK(status.ok());
  return registry;
}

}  // namespace octet
