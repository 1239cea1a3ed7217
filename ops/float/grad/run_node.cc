// One-node forward through an operator registry.
#include "ops/float/grad/run_node.h"

#include <memory>

#include "core/tensor_view.h"

namespace octet::float_ops {

Result<std::vector<Tensor>> RunNode(const OpRegistry& registry, const Node& node, std::span<const Tensor> inputs,
                                    std::span<const bool> present, std::span<const bool> known,
                                    const Context& context) {
  auto fail = [&](const Status& s) {
    return s.WithContext(fmt::format("failed to run node '{}' ({})", node.name, node.op_type));
  };
  const OpPrepareFn* prepare = registry.Find(node.domain, node.op_type);
  if (prepare == nullptr) return fail(Unimplemented("no operator '{}' in the registry", node.op_type));
  if (inputs.size() != node.inputs.size() || present.size() != inputs.size() || known.size() != inputs.size()) {
    return fail(InvalidArgument("{} inputs given for {} input slots", inputs.size(), node.inputs.size()));
  }
  std::vector<ValueInfo> infos(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!present[i]) continue;
    infos[i].present = true;
    infos[i].dtype = inputs[i].dtype();
    infos[i].shape = inputs[i].shape();
    infos[i].constant = known[i] ? &inputs[i] : nullptr;
  }
  std::vector<const QParams*> no_qparams(node.outputs.size(), nullptr);
  OpPrepareArgs prepare_args{node, infos, context, Shape::kMaxElements, no_qparams};
  Result<PreparedOp> prepared = (*prepare)(prepare_args);
  if (!prepared.ok()) return fail(prepared.status());
  PreparedOp& op = *prepared;
  if (!op.constant_outputs.empty()) return op.constant_outputs;
  std::vector<Tensor> outputs;
  std::vector<TensorView> output_views;
  outputs.reserve(op.outputs.size());
  for (const OutputInfo& info : op.outputs) {
    Result<Tensor> t = Tensor::Create(info.dtype, info.shape);
    if (!t.ok()) return fail(t.status());
    outputs.push_back(*std::move(t));
  }
  for (Tensor& t : outputs) output_views.emplace_back(t);
  static const Shape kEmpty{0};
  std::vector<ConstTensorView> input_views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    input_views.push_back(present[i] ? ConstTensorView(inputs[i]) : ConstTensorView(DType::kF32, &kEmpty, nullptr));
  }
  // 64-byte aligned scratch, as the executor gives.
  std::unique_ptr<std::byte[]> scratch_buffer(new std::byte[op.scratch_bytes + 64]);
  std::byte* aligned = scratch_buffer.get();
  aligned += (64 - reinterpret_cast<uintptr_t>(aligned) % 64) % 64;
  OpRunArgs run_args{input_views, output_views, std::span<std::byte>(aligned, op.scratch_bytes), context};
  const Status status = op.kernel->Run(run_args);
  if (!status.ok()) return fail(status);
  return outputs;
}

}  // namespace octet::float_ops
