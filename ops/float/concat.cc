// Concat and Split: [outer, axis block] copies.
#include "ops/float/concat.h"

#include <cstring>
#include <numeric>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareConcat(const OpPrepareArgs& args) {
  if (args.inputs.empty()) return InvalidArgument("Concat needs at least one input");
  OCTET_RETURN_IF_ERROR(CheckArity(args, args.inputs.size(), args.inputs.size()));
  const ValueInfo& first = args.inputs[0];
  if (first.shape.rank() == 0) return InvalidArgument("Concat inputs must have rank >= 1");
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis"));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, first.shape.rank()));
  std::vector<int64_t> dims = first.shape.dims();
  dims[static_cast<size_t>(axis)] = 0;
  std::vector<int64_t> blocks;  // bytes each input contributes per outer index
  const size_t element = DTypeSize(first.dtype);
  const int64_t outer = first.shape.Product(0, axis);
  for (size_t s = 0; s < args.inputs.size(); ++s) {
    const ValueInfo& in = args.inputs[s];
    if (in.dtype != first.dtype) return InvalidArgument("input {} is {}, input 0 is {}", s, in.dtype, first.dtype);
    if (in.shape.rank() != first.shape.rank()) {
      return InvalidArgument("input {} {} and input 0 {} differ in rank", s, in.shape, first.shape);
    }
    for (int d = 0; d < in.shape.rank(); ++d) {
      if (d != axis && in.shape.dim(d) != first.shape.dim(d)) {
        return InvalidArgument("input {} {} and input 0 {} differ outside axis {}", s, in.shape, first.shape, axis);
      }
    }
    dims[static_cast<size_t>(axis)] += in.shape.dim(axis);
    if (dims[static_cast<size_t>(axis)] > Shape::kMaxElements) return OutOfRange("the output would be too large");
    blocks.push_back(in.shape.Product(axis, in.shape.rank()) * static_cast<int64_t>(element));
  }
  const int64_t out_block = std::accumulate(blocks.begin(), blocks.end(), int64_t{0});
  auto kernel = MakeKernel([blocks, outer, out_block](const OpRunArgs& r) -> Status {
    auto* dst = static_cast<std::byte*>(r.outputs[0].raw_data());
    int64_t offset = 0;
    for (size_t s = 0; s < blocks.size(); ++s) {
      const auto* src = static_cast<const std::byte*>(r.inputs[s].raw_data());
      const int64_t b = blocks[s];
      if (b > 0) {
        for (int64_t o = 0; o < outer; ++o) {
          std::memcpy(dst + o * out_block + offset, src + o * b, static_cast<size_t>(b));
        }
      }
      offset += b;
    }
    return OkStatus();
  });
  return MakePrepared({{first.dtype, Shape(std::move(dims))}}, std::move(kernel), "concat");
}

Result<PreparedOp> PrepareSplit(const OpPrepareArgs& args) {
  const size_t n_out = args.node.outputs.size();
  if (n_out == 0) return InvalidArgument("Split needs at least one output");
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 2, 1, n_out));
  const ValueInfo& x = args.inputs[0];
  if (x.shape.rank() == 0) return InvalidArgument("Split input must have rank >= 1");
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis", 0));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, x.shape.rank()));
  const int64_t dim = x.shape.dim(axis);
  std::vector<int64_t> sizes;
  if (Present(args, 1)) {
    OCTET_ASSIGN_OR_RETURN(sizes, ConstantInts(args, 1, "split"));
    if (sizes.size() != n_out) return InvalidArgument("split has {} sizes for {} outputs", sizes.size(), n_out);
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return InvalidArgument("split sizes must be >= 0");
      sum += s;
    }
    if (sum != dim) return InvalidArgument("split sizes sum to {}, axis {} has {}", sum, axis, dim);
  } else {
    if (dim % static_cast<int64_t>(n_out) != 0) {
      return InvalidArgument("axis {} of size {} does not split evenly into {} outputs", axis, dim, n_out);
    }
    sizes.assign(n_out, dim / static_cast<int64_t>(n_out));
  }
  const size_t element = DTypeSize(x.dtype);
  const int64_t outer = x.shape.Product(0, axis);
  const int64_t inner = x.shape.Product(axis + 1, x.shape.rank()) * static_cast<int64_t>(element);
  std::vector<OutputInfo> outs;
  for (int64_t s : sizes) {
    std::vector<int64_t> d = x.shape.dims();
    d[static_cast<size_t>(axis)] = s;
    outs.push_back({x.dtype, Shape(std::move(d))});
  }
  auto kernel = MakeKernel([sizes, outer, inner, dim](const OpRunArgs& r) -> Status {
    const auto* src = static_cast<const std::byte*>(r.inputs[0].raw_data());
    int64_t offset = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      const int64_t b = sizes[k] * inner;
      auto* dst = static_cast<std::byte*>(r.outputs[k].raw_data());
      if (b > 0) {
        for (int64_t o = 0; o < outer; ++o) {
          std::memcpy(dst + o * b, src + o * dim * inner + offset, static_cast<size_t>(b));
        }
      }
      offset += b;
    }
    return OkStatus();
  });
  return MakePrepared(std::move(outs), std::move(kernel), "split");
}

}  // namespace

Status RegisterConcatOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kConcat, PrepareConcat));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kSplit, PrepareSplit));
  return OkStatus();
}

}  // namespace octet::float_ops
