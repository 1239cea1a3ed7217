// Slice as a strided copy.
#include "ops/float/slice.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/float/strided_copy.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareSlice(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 3, 5));
  const Shape& x = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ConstantInts(args, 1, "starts"));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ConstantInts(args, 2, "ends"));
  std::vector<int64_t> axes, steps;
  if (Present(args, 3)) {
    OCTET_ASSIGN_OR_RETURN(axes, ConstantInts(args, 3, "axes"));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (Present(args, 4)) {
    OCTET_ASSIGN_OR_RETURN(steps, ConstantInts(args, 4, "steps"));
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return InvalidArgument("starts, ends, axes and steps must have one length, got {}, {}, {}, {}", starts.size(),
                           ends.size(), axes.size(), steps.size());
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(axes, x.rank()));
  const std::vector<int64_t> in_strides = RowMajorStrides(x);
  StridedView view;
  view.dims = x.dims();
  view.strides = in_strides;
  for (size_t i = 0; i < norm.size(); ++i) {
    const int a = norm[i];
    const int64_t dim = x.dim(a);
    if (steps[i] == 0) return InvalidArgument("steps must not be 0");
    // A step beyond the dim selects at most one element either way; clamping it keeps stride * step in range.
    const int64_t step = std::clamp<int64_t>(steps[i], -std::max<int64_t>(dim, 1), std::max<int64_t>(dim, 1));
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t count = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    view.dims[static_cast<size_t>(a)] = count;
    view.strides[static_cast<size_t>(a)] = in_strides[static_cast<size_t>(a)] * step;
    if (count > 0) view.offset += start * in_strides[static_cast<size_t>(a)];
  }
  return PrepareStridedCopy(args, std::move(view), "slice");
}

}  // namespace

Status RegisterSliceOps(OpRegistry& registry) { return RegisterFloatOp(registry, FloatOp::kSlice, PrepareSlice); }

}  // namespace octet::float_ops
