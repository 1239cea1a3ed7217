// Transpose as a strided copy.
#include "ops/float/transpose.h"

#include <fmt/ranges.h>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/float/strided_copy.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareTranspose(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(CheckPassThroughQParams(args));
  const Shape& x = args.inputs[0].shape;
  std::vector<int64_t> reversed;
  for (int d = x.rank() - 1; d >= 0; --d) reversed.push_back(d);
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> perm, args.node.attributes.GetInts("perm", reversed));
  if (static_cast<int>(perm.size()) != x.rank()) {
    return InvalidArgument("perm [{}] must have {} values for input {}", fmt::join(perm, ", "), x.rank(), x);
  }
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= x.rank() || seen[static_cast<size_t>(p)]) {
      return InvalidArgument("perm [{}] is not a permutation of 0..{}", fmt::join(perm, ", "), x.rank() - 1);
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(x);
  StridedView view;
  for (int64_t p : perm) {
    view.dims.push_back(x.dim(static_cast<int>(p)));
    view.strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  return PrepareStridedCopy(args, std::move(view), "transpose");
}

}  // namespace

Status RegisterTransposeOps(OpRegistry& registry) {
  return RegisterFloatOp(registry, FloatOp::kTranspose, PrepareTranspose);
}

}  // namespace octet::float_ops
