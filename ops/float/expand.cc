// Expand and Tile as one strided copy: Tile of dims d_i by r_i is Expand of the input seen as [1, d_0, 1, d_1, ...]
// to [r_0, d_0, r_1, d_1, ...], whose row-major order is the tiled output's.
#include "ops/float/expand.h"

#include <algorithm>
#include <cstring>

#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

// out = `in` broadcast to `out` by `plan` (one operand), any element size.
std::unique_ptr<OpKernel> BroadcastCopyKernel(NaryPlan plan, DType dtype) {
  return MakeKernel([plan = std::move(plan), dtype](const OpRunArgs& r) -> Status {
    if (plan.outer * plan.inner == 0) return OkStatus();
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = r.inputs[0].data<T>();
      T* y = r.outputs[0].data<T>();
      ForEachNaryRow(r.context, plan, [&](int64_t row, const int64_t* off) {
        T* o = y + row * plan.inner;
        if (plan.inner_step[0] == 1) {
          std::memcpy(o, x + off[0], static_cast<size_t>(plan.inner) * sizeof(T));
        } else {
          std::fill(o, o + plan.inner, x[off[0]]);
        }
      });
    });
    return OkStatus();
  });
}

Result<PreparedOp> PrepareExpand(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckPassThroughQParams(args));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstantInts(args, 1, "shape"));
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("input 1 (shape) must hold dims >= 0, got [{}]", fmt::join(dims, ", "));
  }
  const Shape& in = args.inputs[0].shape;
  Result<Shape> out = BroadcastShapes(in, Shape(dims));
  if (!out.ok()) {
    return InvalidArgument(
        "input 0's shape {} cannot be expanded to shape [{}] (each dim pair must be equal or "
        "one of them 1)",
        in, fmt::join(dims, ", "));
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out->dims()));
  const Shape shapes[] = {in};
  const DType dtype = args.inputs[0].dtype;
  return MakePrepared({{dtype, *out}}, BroadcastCopyKernel(PlanNary(shapes, *out), dtype),
                      fmt::format("expand_{}", DTypeName(dtype)));
}

Result<PreparedOp> PrepareTile(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckPassThroughQParams(args));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ConstantInts(args, 1, "repeats"));
  const Shape& in = args.inputs[0].shape;
  if (static_cast<int>(repeats.size()) != in.rank()) {
    return InvalidArgument("input 1 (repeats) must have one value per input axis ({}), got [{}]", in.rank(),
                           fmt::join(repeats, ", "));
  }
  std::vector<int64_t> out_dims, split_in, split_out;
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t r = repeats[static_cast<size_t>(i)];
    if (r < 0) return InvalidArgument("input 1 (repeats) must hold values >= 0, got [{}]", fmt::join(repeats, ", "));
    OCTET_ASSIGN_OR_RETURN(int64_t n, CheckedProduct(std::vector<int64_t>{in.dim(i), r}));
    out_dims.push_back(n);
    split_in.insert(split_in.end(), {1, in.dim(i)});
    split_out.insert(split_out.end(), {r, in.dim(i)});
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));
  const Shape shapes[] = {Shape(split_in)};
  const DType dtype = args.inputs[0].dtype;
  return MakePrepared({{dtype, Shape(out_dims)}}, BroadcastCopyKernel(PlanNary(shapes, Shape(split_out)), dtype),
                      fmt::format("tile_{}", DTypeName(dtype)));
}

}  // namespace

Status RegisterExpandOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kExpand, PrepareExpand));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kTile, PrepareTile));
  return OkStatus();
}

}  // namespace octet::float_ops
