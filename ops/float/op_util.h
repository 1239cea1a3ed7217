// Helpers shared by the float operators' Prepare functions: arity and dtype checks, axis normalisation,
// multidirectional broadcasting, and reading small integer tensors (shapes, axes) known at compile time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/op_registry.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/threading.h"

namespace octet::float_ops {

// Fails unless the node has between min_inputs and max_inputs input slots, the first `required` of them present,
// and exactly `outputs` output slots (or at most max_outputs when max_outputs >= 0).
Status CheckArity(const OpPrepareArgs& args, size_t min_inputs, size_t max_inputs, size_t min_outputs = 1,
                  size_t max_outputs = 1);
// Fails unless input `slot` is present and of dtype `dtype`.
Status CheckInput(const OpPrepareArgs& args, size_t slot, DType dtype);
// Fails unless input `slot` (present) has rank in [min_rank, max_rank].
Status CheckRank(const OpPrepareArgs& args, size_t slot, int min_rank, int max_rank);
bool Present(const OpPrepareArgs& args, size_t slot);
// Fails unless the ints attribute `name` has `count` values, each >= 1 (kernel_shape, strides, dilations).
Status CheckPositiveInts(const char* name, std::span<const int64_t> values, size_t count);

// axis in [-rank, rank) -> [0, rank); fails naming `what` otherwise.
Result<int> NormalizeAxis(int64_t axis, int rank, const char* what = "axis");
// Each of `axes` normalised; fails on out-of-range or repeated axes.
Result<std::vector<int>> NormalizeAxes(std::span<const int64_t> axes, int rank, const char* what = "axes");

// Numpy multidirectional broadcasting of two or more shapes.
Result<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// Element strides of `shape` seen as broadcast to `out` (0 along broadcast dims), aligned to out's rank.
std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out);
// Row-major strides of a shape.
std::vector<int64_t> RowMajorStrides(const Shape& shape);

// How a broadcasting binary operator walks its output: `outer` rows (an odometer over outer_dims with one stride per
// operand) of `inner` elements each, in which operand x advances by step_x (1: contiguous, 0: one repeated
// element). The inner run is the longest suffix of the output dims over which each operand is either contiguous or
// repeated; same-shape operands give one row of every element.
struct BroadcastPlan {
  int64_t outer = 1, inner = 1;
  int64_t step_a = 1, step_b = 1;
  std::vector<int64_t> outer_dims, outer_stride_a, outer_stride_b;
};
BroadcastPlan PlanBroadcast(const Shape& a, const Shape& b, const Shape& out);
// The operands' element offsets at the start of output row `row`.
void BroadcastRowOffsets(const BroadcastPlan& p, int64_t row, int64_t* off_a, int64_t* off_b);

// Calls fn(row, off_a, off_b) for every output row, tiles of `rows_per_tile` rows running on the context's threads
// (each tile walks the odometer from its first row, so the split never changes a result).
template <typename Fn>
void ForEachBroadcastRow(const Context& context, const BroadcastPlan& p, int64_t rows_per_tile, Fn&& fn) {
  ParallelFor(context, p.outer, rows_per_tile, [&](int64_t begin, int64_t end) {
    const size_t rank = p.outer_dims.size();
    std::vector<int64_t> idx(rank, 0);
    int64_t rem = begin, off_a = 0, off_b = 0;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % p.outer_dims[d];
      rem /= p.outer_dims[d];
      off_a += idx[d] * p.outer_stride_a[d];
      off_b += idx[d] * p.outer_stride_b[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      fn(row, off_a, off_b);
      for (size_t d = rank; d-- > 0;) {
        off_a += p.outer_stride_a[d];
        off_b += p.outer_stride_b[d];
        if (++idx[d] < p.outer_dims[d]) break;
        off_a -= p.outer_stride_a[d] * p.outer_dims[d];
        off_b -= p.outer_stride_b[d] * p.outer_dims[d];
        idx[d] = 0;
      }
    }
  });
}

// The values of an integer input that fixes a shape (s32 as imported from ONNX int64): a constant, or data computed
// from graph inputs (core/op_registry.h's InputData); an error naming `what` when the input is absent.
Result<std::vector<int64_t>> ConstantInts(const OpPrepareArgs& args, size_t slot, const char* what);
// A float scalar input (rank 0 or one element) read like ConstantInts, or `default_value` when it is absent.
Result<float> ConstantScalar(const OpPrepareArgs& args, size_t slot, float default_value, const char* what);

// Checked product of dims, failing above Shape::kMaxElements.
Result<int64_t> CheckedProduct(std::span<const int64_t> dims);
// Fails when an output of these dims would exceed args.max_output_elements (call it before allocating anything in
// proportion to the output).
Status CheckOutputElements(const OpPrepareArgs& args, std::span<const int64_t> dims);

// The output-size rule of convolution and pooling along one axis:
// floor or ceil((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1, with PyTorch's rule that
// with ceil the last window must start inside the input or the begin padding. Fails when the result is < 1.
Result<int64_t> WindowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                                 int64_t dilation, bool ceil_mode);

// Resolves ONNX auto_pad (NOTSET, VALID, SAME_UPPER, SAME_LOWER) into explicit pads [begin..., end...].
Result<std::vector<int64_t>> ResolvePads(const std::string& auto_pad, std::vector<int64_t> pads,
                                         std::span<const int64_t> in, std::span<const int64_t> kernel,
                                         std::span<const int64_t> strides, std::span<const int64_t> dilations);

// Shape-only operators on u8 / s8 (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose) move codes, so their
// output carries input 0's qparams: fails when both have per-tensor qparams and they differ (per-channel qparams
// follow their axis, which these operators may move; they are not judged here).
Status CheckPassThroughQParams(const OpPrepareArgs& args);

PreparedOp MakePrepared(std::vector<OutputInfo> outputs, std::unique_ptr<OpKernel> kernel, std::string kernel_name,
                        size_t scratch_bytes = 0);

}  // namespace octet::float_ops
