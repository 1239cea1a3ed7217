// Constant, ConstantOfShape, Shape.
#include "ops/float/constant.h"

#include <algorithm>
#include <cstring>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

// A kernel writing fixed bytes.
PreparedOp Fixed(Tensor value, const char* name) {
  OutputInfo info{value.dtype(), value.shape()};
  auto kernel = MakeKernel([value](const OpRunArgs& r) -> Status {
    if (value.SizeBytes() > 0) std::memcpy(r.outputs[0].raw_data(), value.raw_data(), value.SizeBytes());
    return OkStatus();
  });
  return MakePrepared({info}, std::move(kernel), name);
}

Result<PreparedOp> PrepareConstant(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 0, 0));
  const AttributeMap& at = args.node.attributes;
  if (at.items().size() != 1) {
    return InvalidArgument("Constant needs exactly one of value, value_float(s), value_int(s), got {} attributes",
                           at.items().size());
  }
  const auto& [name, attr] = *at.items().begin();
  Tensor t;
  if (name == "value") {
    OCTET_ASSIGN_OR_RETURN(t, at.GetTensor("value"));
  } else if (name == "value_float") {
    OCTET_ASSIGN_OR_RETURN(float v, at.GetFloat(name));
    OCTET_ASSIGN_OR_RETURN(t, Tensor::FromValues<float>(Shape{}, std::span<const float>(&v, 1)));
  } else if (name == "value_floats") {
    OCTET_ASSIGN_OR_RETURN(std::vector<float> v, at.GetFloats(name));
    OCTET_ASSIGN_OR_RETURN(t, Tensor::FromValues<float>(Shape{static_cast<int64_t>(v.size())}, v));
  } else if (name == "value_int" || name == "value_ints") {
    std::vector<int64_t> v;
    if (name == "value_int") {
      OCTET_ASSIGN_OR_RETURN(int64_t i, at.GetInt(name));
      v.push_back(i);
    } else {
      OCTET_ASSIGN_OR_RETURN(v, at.GetInts(name));
    }
    std::vector<int32_t> narrow;
    for (int64_t i : v) narrow.push_back(static_cast<int32_t>(std::clamp<int64_t>(i, INT32_MIN, INT32_MAX)));
    Shape s = name == "value_int" ? Shape{} : Shape{static_cast<int64_t>(narrow.size())};
    OCTET_ASSIGN_OR_RETURN(t, Tensor::FromValues<int32_t>(s, narrow));
  } else {
    return Unimplemented("Constant attribute '{}' is not supported", name);
  }
  return Fixed(std::move(t), "constant");
}

Result<PreparedOp> PrepareConstantOfShape(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstantInts(args, 0, "shape"));
  OCTET_ASSIGN_OR_RETURN(Shape shape, Shape::Create(dims));
  Tensor value;
  if (args.node.attributes.Has("value")) {
    OCTET_ASSIGN_OR_RETURN(value, args.node.attributes.GetTensor("value"));
    if (value.NumElements() != 1) return InvalidArgument("value must hold one element, got {}", value.shape());
  } else {
    OCTET_ASSIGN_OR_RETURN(value, Tensor::Create(DType::kF32, Shape{1}));
  }
  const DType dtype = value.dtype();
  const size_t element = DTypeSize(dtype);
  auto kernel = MakeKernel([value, element](const OpRunArgs& r) -> Status {
    auto* dst = static_cast<std::byte*>(r.outputs[0].raw_data());
    for (int64_t i = 0; i < r.outputs[0].NumElements(); ++i) {
      std::memcpy(dst + static_cast<size_t>(i) * element, value.raw_data(), element);
    }
    return OkStatus();
  });
  return MakePrepared({{dtype, std::move(shape)}}, std::move(kernel), "constant_of_shape");
}

Result<PreparedOp> PrepareShape(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  const Shape& x = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(int64_t start, args.node.attributes.GetInt("start", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t end, args.node.attributes.GetInt("end", x.rank()));
  const int64_t r = x.rank();
  start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
  end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
  std::vector<int32_t> dims;
  for (int64_t d = start; d < end; ++d) {
    if (x.dim(static_cast<int>(d)) > INT32_MAX) return OutOfRange("dimension {} does not fit in int32", x.dim(static_cast<int>(d)));
    dims.push_back(static_cast<int32_t>(x.dim(static_cast<int>(d))));
  }
  OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::FromValues<int32_t>(Shape{static_cast<int64_t>(dims.size())}, dims));
  PreparedOp op = Fixed(t, "shape");
  op.constant_outputs.push_back(std::move(t));  // known whatever the input's data
  return op;
}

// Size: the element count of input 0, a scalar (s32 for ONNX's int64), known whatever the input's data.
Result<PreparedOp> PrepareSize(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  const int64_t n = args.inputs[0].shape.NumElements();
  if (n > INT32_MAX) return OutOfRange("the element count {} does not fit in int32", n);
  const int32_t count[] = {static_cast<int32_t>(n)};
  OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::FromValues<int32_t>(Shape{}, count));
  PreparedOp op = Fixed(t, "size");
  op.constant_outputs.push_back(std::move(t));
  return op;
}

}  // namespace

Status RegisterConstantOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kSize, PrepareSize));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kConstant, PrepareConstant));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kConstantOfShape, PrepareConstantOfShape));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kShape, PrepareShape));
  return OkStatus();
}

}  // namespace octet::float_ops
