// Shared Prepare helpers for the float operators.
#include "ops/float/op_util.h"

#include <algorithm>

#include <fmt/ranges.h>

namespace octet::float_ops {

bool Present(const OpPrepareArgs& args, size_t slot) {
  return slot < args.inputs.size() && args.inputs[slot].present;
}

Status CheckArity(const OpPrepareArgs& args, size_t min_inputs, size_t max_inputs, size_t min_outputs,
                  size_t max_outputs) {
  const size_t n = args.inputs.size();
  if (n < min_inputs || n > max_inputs) {
    if (min_inputs == max_inputs) return InvalidArgument("expected {} inputs, got {}", min_inputs, n);
    return InvalidArgument("expected {} to {} inputs, got {}", min_inputs, max_inputs, n);
  }
  for (size_t s = 0; s < min_inputs; ++s) {
    if (!args.inputs[s].present) return InvalidArgument("input {} is required but omitted", s);
  }
  const size_t m = args.node.outputs.size();
  if (m < min_outputs || m > max_outputs) {
    if (min_outputs == max_outputs) return InvalidArgument("expected {} outputs, got {}", min_outputs, m);
    return InvalidArgument("expected {} to {} outputs, got {}", min_outputs, max_outputs, m);
  }
  return OkStatus();
}

Status CheckPositiveInts(const char* name, std::span<const int64_t> values, size_t count) {
  if (values.size() != count) return InvalidArgument("{} must have {} values, got {}", name, count, values.size());
  for (int64_t v : values) {
    if (v <= 0) return InvalidArgument("{} must be positive, got [{}]", name, fmt::join(values, ", "));
  }
  return OkStatus();
}

Status CheckInput(const OpPrepareArgs& args, size_t slot, DType dtype) {
  if (!Present(args, slot)) return InvalidArgument("input {} is required but omitted", slot);
  if (args.inputs[slot].dtype != dtype) {
    return InvalidArgument("input {} must be {}, got {}", slot, dtype, args.inputs[slot].dtype);
  }
  return OkStatus();
}

Status CheckRank(const OpPrepareArgs& args, size_t slot, int min_rank, int max_rank) {
  if (!Present(args, slot)) return InvalidArgument("input {} is required but omitted", slot);
  const int r = args.inputs[slot].shape.rank();
  if (r < min_rank || r > max_rank) {
    if (min_rank == max_rank) {
      return InvalidArgument("input {} must have rank {}, got shape {}", slot, min_rank, args.inputs[slot].shape);
    }
    return InvalidArgument("input {} must have rank {} to {}, got shape {}", slot, min_rank, max_rank,
                           args.inputs[slot].shape);
  }
  return OkStatus();
}

Result<int> NormalizeAxis(int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument("{} must be in [{}, {}), got {}", what, -rank, rank, axis);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Result<std::vector<int>> NormalizeAxes(std::span<const int64_t> axes, int rank, const char* what) {
  std::vector<int> out;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArgument("{} must be in [{}, {}), got [{}]", what, -rank, rank, fmt::join(axes, ", "));
    }
    const int n = static_cast<int>(a < 0 ? a + rank : a);
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return InvalidArgument("{} must not repeat, got [{}]", what, fmt::join(axes, ", "));
    }
    out.push_back(n);
  }
  return out;
}

Result<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - a.rank());
    const int ib = i - (rank - b.rank());
    const int64_t da = ia >= 0 ? a.dim(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("shapes {} and {} cannot be broadcast together", a, b);
    }
    dims[static_cast<size_t>(i)] = da == 1 ? db : da;
  }
  return Shape(std::move(dims));
}

std::vector<int64_t> RowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int i = shape.rank() - 2; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = strides[static_cast<size_t>(i + 1)] * shape.dim(i + 1);
  }
  return strides;
}

std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out) {
  const std::vector<int64_t> own = RowMajorStrides(shape);
  std::vector<int64_t> strides(static_cast<size_t>(out.rank()), 0);
  const int offset = out.rank() - shape.rank();
  for (int i = 0; i < shape.rank(); ++i) {
    strides[static_cast<size_t>(i + offset)] = shape.dim(i) == 1 ? 0 : own[static_cast<size_t>(i)];
  }
  return strides;
}

BroadcastPlan PlanBroadcast(const Shape& a, const Shape& b, const Shape& out) {
  BroadcastPlan p;
  const std::vector<int64_t> sa = BroadcastStrides(a, out), sb = BroadcastStrides(b, out);
  // Classify dims from the innermost: each operand is "full" (stride follows out) or "repeated" (stride 0).
  int split = out.rank();
  int mode_a = -1, mode_b = -1;  // -1 undecided, 0 repeated, 1 full
  int64_t expect_a = 1, expect_b = 1;
  while (split > 0) {
    const int d = split - 1;
    const int64_t n = out.dim(d);
    if (n != 1) {
      const int ma = sa[static_cast<size_t>(d)] == 0 ? 0 : 1;
      const int mb = sb[static_cast<size_t>(d)] == 0 ? 0 : 1;
      if ((mode_a != -1 && ma != mode_a) || (mode_b != -1 && mb != mode_b)) break;
      if (ma == 1 && sa[static_cast<size_t>(d)] != expect_a) break;
      if (mb == 1 && sb[static_cast<size_t>(d)] != expect_b) break;
      mode_a = ma;
      mode_b = mb;
      if (ma == 1) expect_a *= n;
      if (mb == 1) expect_b *= n;
      p.inner *= n;
    }
    --split;
  }
  p.step_a = mode_a == 0 ? 0 : 1;
  p.step_b = mode_b == 0 ? 0 : 1;
  for (int d = 0; d < split; ++d) {
    if (out.dim(d) == 1) continue;
    p.outer_dims.push_back(out.dim(d));
    p.outer_stride_a.push_back(sa[static_cast<size_t>(d)]);
    p.outer_stride_b.push_back(sb[static_cast<size_t>(d)]);
    p.outer *= out.dim(d);
  }
  return p;
}

void BroadcastRowOffsets(const BroadcastPlan& p, int64_t row, int64_t* off_a, int64_t* off_b) {
  *off_a = 0;
  *off_b = 0;
  for (size_t d = p.outer_dims.size(); d-- > 0;) {
    const int64_t i = row % p.outer_dims[d];
    row /= p.outer_dims[d];
    *off_a += i * p.outer_stride_a[d];
    *off_b += i * p.outer_stride_b[d];
  }
}

Result<std::vector<int64_t>> ConstantInts(const OpPrepareArgs& args, size_t slot, const char* what) {
  if (!Present(args, slot)) return InvalidArgument("input {} ({}) is required but omitted", slot, what);
  const ValueInfo& info = args.inputs[slot];
  auto data = InputData(info);
  if (!data.ok()) return data.status().WithContext(fmt::format("input {} ({})", slot, what));
  if (info.dtype != DType::kS32) return InvalidArgument("input {} ({}) must be an integer tensor, got {}", slot, what, info.dtype);
  if (info.shape.rank() > 1) return InvalidArgument("input {} ({}) must be 1-D, got shape {}", slot, what, info.shape);
  std::vector<int64_t> v;
  for (int32_t x : (*data)->values<int32_t>()) v.push_back(x);
  return v;
}

Result<float> ConstantScalar(const OpPrepareArgs& args, size_t slot, float default_value, const char* what) {
  if (!Present(args, slot)) return default_value;
  const ValueInfo& info = args.inputs[slot];
  if (info.dtype != DType::kF32 || info.shape.NumElements() != 1) {
    return InvalidArgument("input {} ({}) must be one f32 value, got {} {}", slot, what, info.dtype, info.shape);
  }
  auto data = InputData(info);
  if (!data.ok()) return data.status().WithContext(fmt::format("input {} ({})", slot, what));
  return (*data)->values<float>()[0];
}

Result<int64_t> CheckedProduct(std::span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("negative dimension {}", d);
    if (d != 0 && p > Shape::kMaxElements / d) return OutOfRange("more than 2^48 elements");
    p *= d;
  }
  return p;
}

Status CheckOutputElements(const OpPrepareArgs& args, std::span<const int64_t> dims) {
  OCTET_ASSIGN_OR_RETURN(int64_t count, CheckedProduct(dims));
  if (count > args.max_output_elements) {
    return OutOfRange("the output [{}] would have {} elements, more than the limit of {}", fmt::join(dims, ", "),
                      count, args.max_output_elements);
  }
  return OkStatus();
}

Result<int64_t> WindowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                                 int64_t dilation, bool ceil_mode) {
  if (kernel <= 0 || stride <= 0 || dilation <= 0 || pad_begin < 0 || pad_end < 0) {
    return InvalidArgument("kernel, strides and dilations must be positive and pads >= 0, got kernel {}, stride {}, "
                           "dilation {}, pads {} {}",
                           kernel, stride, dilation, pad_begin, pad_end);
  }
  constexpr int64_t kLimit = int64_t{1} << 40;
  if (in > kLimit || kernel > kLimit || stride > kLimit || dilation > kLimit || pad_begin > kLimit ||
      pad_end > kLimit) {
    return OutOfRange("window sizes above 2^40 are not supported");
  }
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + pad_begin + pad_end;
  if (padded < span) {
    return InvalidArgument("the window ({} with dilation) is larger than the padded input ({})", span, padded);
  }
  int64_t out = (padded - span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  if (out < 1) return InvalidArgument("the output would be empty");
  return out;
}

Result<std::vector<int64_t>> ResolvePads(const std::string& auto_pad, std::vector<int64_t> pads,
                                         std::span<const int64_t> in, std::span<const int64_t> kernel,
                                         std::span<const int64_t> strides, std::span<const int64_t> dilations) {
  const size_t n = in.size();
  if (auto_pad == "NOTSET") {
    if (pads.empty()) pads.assign(2 * n, 0);
    if (pads.size() != 2 * n) return InvalidArgument("pads must have {} values, got {}", 2 * n, pads.size());
    for (int64_t p : pads) {
      if (p < 0) return InvalidArgument("pads must be >= 0, got [{}]", fmt::join(pads, ", "));
    }
    return pads;
  }
  if (auto_pad == "VALID") return std::vector<int64_t>(2 * n, 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::vector<int64_t> out(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      if (strides[i] <= 0) return InvalidArgument("strides must be positive");
      const int64_t o = (in[i] + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (o - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 - in[i]);
      const int64_t small = total / 2;
      out[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      out[i + n] = total - out[i];
    }
    return out;
  }
  return InvalidArgument("auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, got '{}'", auto_pad);
}

Status CheckPassThroughQParams(const OpPrepareArgs& args) {
  if (args.inputs.empty() || args.output_qparams.empty()) return OkStatus();
  const QParams* x = args.inputs[0].qparams;
  const QParams* y = args.output_qparams[0];
  if (x == nullptr || y == nullptr || x->per_channel() || y->per_channel()) return OkStatus();
  if (x->dtype() != y->dtype() || x->scale() != y->scale() || x->zero_point() != y->zero_point() ||
      x->quant_min() != y->quant_min() || x->quant_max() != y->quant_max()) {
    return InvalidArgument("output 0 has qparams {} but this operator only moves its input's codes, whose qparams "
                           "are {}",
                           y->ToString(), x->ToString());
  }
  return OkStatus();
}

PreparedOp MakePrepared(std::vector<OutputInfo> outputs, std::unique_ptr<OpKernel> kernel, std::string kernel_name,
                        size_t scratch_bytes) {
  PreparedOp op;
  op.outputs = std::move(outputs);
  op.kernel = std::move(kernel);
  op.kernel_name = std::move(kernel_name);
  op.scratch_bytes = scratch_bytes;
  return op;
}

}  // namespace octet::float_ops
