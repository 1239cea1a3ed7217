// Multidirectional broadcasting plans for any number of operands.
#include "ops/float/nary_broadcast.h"

#include "ops/float/op_util.h"

namespace octet::float_ops {

Result<Shape> BroadcastAll(std::span<const Shape> shapes) {
  if (shapes.empty()) return InvalidArgument("broadcasting needs at least one shape");
  Shape out = shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i) {
    OCTET_ASSIGN_OR_RETURN(out, BroadcastShapes(out, shapes[i]));
  }
  return out;
}

NaryPlan PlanNary(std::span<const Shape> operands, const Shape& out) {
  const size_t n = operands.size();
  // Dims of the output other than 1, each with every operand's stride (0 where the operand is broadcast).
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(n);
  std::vector<std::vector<int64_t>> full(n);
  for (size_t k = 0; k < n; ++k) full[k] = BroadcastStrides(operands[k], out);
  for (int d = 0; d < out.rank(); ++d) {
    if (out.dim(d) == 1) continue;
    dims.push_back(out.dim(d));
    for (size_t k = 0; k < n; ++k) strides[k].push_back(full[k][static_cast<size_t>(d)]);
  }
  // Merge dim d into d+1 when, for every operand, both are repeated or d's stride continues d+1's.
  std::vector<int64_t> mdims;
  std::vector<std::vector<int64_t>> mstrides(n);
  for (size_t d = 0; d < dims.size(); ++d) {
    bool merge = !mdims.empty();
    for (size_t k = 0; k < n && merge; ++k) {
      const int64_t outer = mstrides[k].back(), inner = strides[k][d];
      merge = (outer == 0 && inner == 0) || (inner != 0 && outer == inner * dims[d]);
    }
    if (merge) {
      mdims.back() *= dims[d];
      for (size_t k = 0; k < n; ++k) mstrides[k].back() = strides[k][d];
    } else {
      mdims.push_back(dims[d]);
      for (size_t k = 0; k < n; ++k) mstrides[k].push_back(strides[k][d]);
    }
  }
  NaryPlan p;
  p.inner_step.assign(n, 0);
  p.outer_strides.assign(n, {});
  if (!mdims.empty()) {
    p.inner = mdims.back();
    // The innermost stride of a non-repeated operand is 1: it is that operand's last non-1 dim.
    for (size_t k = 0; k < n; ++k) p.inner_step[k] = mstrides[k].back() == 0 ? 0 : 1;
    mdims.pop_back();
    for (size_t k = 0; k < n; ++k) mstrides[k].pop_back();
  }
  for (size_t d = 0; d < mdims.size(); ++d) {
    p.outer_dims.push_back(mdims[d]);
    p.outer *= mdims[d];
  }
  for (size_t k = 0; k < n; ++k) p.outer_strides[k] = std::move(mstrides[k]);
  return p;
}

Status CheckNotQuantized(const OpPrepareArgs& args, size_t slot) {
  if (slot < args.inputs.size() && args.inputs[slot].qparams != nullptr) {
    return Unimplemented(
        "input {} ('{}') holds quantized codes ({}); this operator computes on stored values: "
        "dequantize it first (DequantizeLinear)",
        slot, args.inputs[slot].name, args.inputs[slot].qparams->ToString());
  }
  return OkStatus();
}

}  // namespace octet::float_ops
