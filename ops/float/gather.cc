// Gather: for each outer index and each index value, copy one inner block.
#include "ops/float/gather.h"

#include <cstring>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareGather(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 1, DType::kS32));
  const ValueInfo& data = args.inputs[0];
  const Shape& indices = args.inputs[1].shape;
  if (data.shape.rank() == 0) return InvalidArgument("data must have rank >= 1");
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis", 0));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, data.shape.rank()));
  std::vector<int64_t> dims(data.shape.dims().begin(), data.shape.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), data.shape.dims().begin() + axis + 1, data.shape.dims().end());
  OCTET_RETURN_IF_ERROR(CheckedProduct(dims).status());
  const int64_t outer = data.shape.Product(0, axis);
  const int64_t dim = data.shape.dim(axis);
  const int64_t inner = data.shape.Product(axis + 1, data.shape.rank()) * static_cast<int64_t>(DTypeSize(data.dtype));
  const int64_t count = indices.NumElements();
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const int32_t* idx = r.inputs[1].data<int32_t>();
    for (int64_t i = 0; i < count; ++i) {
      if (idx[i] < -dim || idx[i] >= dim) {
        return OutOfRange("index {} (element {} of the indices) is out of range [{}, {})", idx[i], i, -dim, dim);
      }
    }
    const auto* src = static_cast<const std::byte*>(r.inputs[0].raw_data());
    auto* dst = static_cast<std::byte*>(r.outputs[0].raw_data());
    if (inner == 0) return OkStatus();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < count; ++i) {
        const int64_t k = idx[i] < 0 ? idx[i] + dim : idx[i];
        std::memcpy(dst + (o * count + i) * inner, src + (o * dim + k) * inner, static_cast<size_t>(inner));
      }
    }
    return OkStatus();
  });
  return MakePrepared({{data.dtype, Shape(std::move(dims))}}, std::move(kernel), "gather");
}

}  // namespace

Status RegisterGatherOps(OpRegistry& registry) { return RegisterFloatOp(registry, FloatOp::kGather, PrepareGather); }

}  // namespace octet::float_ops
