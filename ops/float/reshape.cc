// Shape-only operators: the output is a copy of the input bytes under a new shape.
#include "ops/float/reshape.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/ranges.h>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

std::unique_ptr<OpKernel> CopyKernel() {
  return MakeKernel([](const OpRunArgs& r) -> Status {
    if (r.outputs[0].SizeBytes() > 0 && r.outputs[0].raw_data() != r.inputs[0].raw_data()) {
      std::memcpy(r.outputs[0].raw_data(), r.inputs[0].raw_data(), r.outputs[0].SizeBytes());
    }
    return OkStatus();
  });
}

// Any dtype: the bytes are copied (u8 / s8 values keep their input's qparams).
Result<PreparedOp> CopyAs(const OpPrepareArgs& args, Shape shape, const char* name) {
  OCTET_RETURN_IF_ERROR(CheckPassThroughQParams(args));
  std::vector<OutputInfo> outs = {{args.inputs[0].dtype, std::move(shape)}};
  return MakePrepared(std::move(outs), CopyKernel(), name);
}

Result<PreparedOp> PrepareReshape(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const Shape& x = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> target, ConstantInts(args, 1, "shape"));
  OCTET_ASSIGN_OR_RETURN(int64_t allowzero, args.node.attributes.GetInt("allowzero", 0));
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t& d = target[i];
    if (d == 0 && allowzero == 0) {
      if (static_cast<int>(i) >= x.rank()) {
        return InvalidArgument("shape [{}] copies dim {} (0) but the input {} has rank {}", fmt::join(target, ", "),
                               i, x, x.rank());
      }
      d = x.dim(static_cast<int>(i));
    }
    if (d == -1) {
      if (infer >= 0) return InvalidArgument("shape [{}] has more than one -1", fmt::join(target, ", "));
      infer = static_cast<int>(i);
      continue;
    }
    if (d < 0) return InvalidArgument("shape [{}] has a negative dimension", fmt::join(target, ", "));
    if (d != 0 && known > Shape::kMaxElements / d) return OutOfRange("shape has more than 2^48 elements");
    known *= d;
  }
  if (infer >= 0) {
    if (allowzero != 0 && known == 0) return InvalidArgument("-1 cannot be inferred next to a 0 with allowzero");
    if (known == 0 || x.NumElements() % known != 0) {
      return InvalidArgument("cannot reshape {} to [{}]: {} elements do not divide", x, fmt::join(target, ", "),
                             x.NumElements());
    }
    target[static_cast<size_t>(infer)] = x.NumElements() / known;
    known = x.NumElements();
  }
  if (known != x.NumElements()) {
    return InvalidArgument("cannot reshape {} ({} elements) to [{}] ({} elements)", x, x.NumElements(),
                           fmt::join(target, ", "), known);
  }
  return CopyAs(args, Shape(std::move(target)), "reshape");
}

Result<PreparedOp> PrepareFlatten(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  const Shape& x = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(int64_t axis, args.node.attributes.GetInt("axis", 1));
  if (axis < -x.rank() || axis > x.rank()) {
    return InvalidArgument("axis must be in [{}, {}], got {}", -x.rank(), x.rank(), axis);
  }
  const int a = static_cast<int>(axis < 0 ? axis + x.rank() : axis);
  return CopyAs(args, Shape{x.Product(0, a), x.Product(a, x.rank())}, "flatten");
}

Result<PreparedOp> PrepareSqueeze(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 2));
  const Shape& x = args.inputs[0].shape;
  std::vector<bool> drop(static_cast<size_t>(x.rank()), false);
  if (Present(args, 1)) {
    OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstantInts(args, 1, "axes"));
    OCTET_ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(axes, x.rank()));
    for (int a : norm) {
      if (x.dim(a) != 1) return InvalidArgument("cannot squeeze axis {} of {}: its size is not 1", a, x);
      drop[static_cast<size_t>(a)] = true;
    }
  } else {
    for (int d = 0; d < x.rank(); ++d) drop[static_cast<size_t>(d)] = x.dim(d) == 1;
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < x.rank(); ++d) {
    if (!drop[static_cast<size_t>(d)]) dims.push_back(x.dim(d));
  }
  return CopyAs(args, Shape(std::move(dims)), "squeeze");
}

Result<PreparedOp> PrepareUnsqueeze(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const Shape& x = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstantInts(args, 1, "axes"));
  const int rank = x.rank() + static_cast<int>(axes.size());
  OCTET_ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(axes, rank));
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int a : norm) inserted[static_cast<size_t>(a)] = true;
  std::vector<int64_t> dims;
  int src = 0;
  for (int d = 0; d < rank; ++d) dims.push_back(inserted[static_cast<size_t>(d)] ? 1 : x.dim(src++));
  return CopyAs(args, Shape(std::move(dims)), "unsqueeze");
}

Result<PreparedOp> PrepareIdentity(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  return CopyAs(args, args.inputs[0].shape, "identity");
}

// Training-mode Dropout's keep mask, drawn as numpy's legacy RandomState(seed).uniform(0, 1, n) >= ratio (MT19937
// seeded with the low 32 bits of `seed`, 53-bit doubles): ONNX leaves the generator open, and this is the one that
// ONNX's reference implementation and its backend tests use, so seeded models give their reference outputs.
void DropoutKeepMask(uint64_t seed, float ratio, int64_t n, uint8_t* keep) {
  std::mt19937 gen(static_cast<uint32_t>(seed & 0xffffffffu));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t a = static_cast<uint32_t>(gen()) >> 5, b = static_cast<uint32_t>(gen()) >> 6;
    const double u = (a * 67108864.0 + b) / 9007199254740992.0;
    keep[i] = u >= static_cast<double>(ratio) ? 1 : 0;
  }
}

Result<PreparedOp> PrepareDropout(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 3, 1, 2));
  bool training = false;
  float ratio = 0.5f;
  if (Present(args, 2)) {
    const ValueInfo& t = args.inputs[2];
    // training_mode is a bool in ONNX, imported as an integer; it and the ratio decide what the node computes, so
    // values computed at run time make the executor compile per run.
    if (t.shape.NumElements() != 1 || t.dtype == DType::kF32) {
      return InvalidArgument("Dropout's training_mode must be one bool, got {} {}", t.dtype, t.shape);
    }
    OCTET_ASSIGN_OR_RETURN(const Tensor* mode, InputData(t));
    training = t.dtype == DType::kS32 ? mode->values<int32_t>()[0] != 0
             : t.dtype == DType::kU8  ? mode->values<uint8_t>()[0] != 0
                                      : mode->values<int8_t>()[0] != 0;
    if (training && Present(args, 1)) {
      OCTET_ASSIGN_OR_RETURN(ratio, ConstantScalar(args, 1, 0.5f, "ratio"));
    }
  }
  std::vector<OutputInfo> outs = {{args.inputs[0].dtype, args.inputs[0].shape}};
  const bool mask = args.node.outputs.size() > 1 && args.node.outputs[1] != kNoValue;
  if (args.node.outputs.size() > 1) outs.push_back({DType::kU8, args.inputs[0].shape});
  // Training mode with ratio 0 keeps everything, like inference.
  if (training && ratio != 0.0f) {
    if (!(ratio > 0.0f && ratio < 1.0f)) {
      return InvalidArgument("Dropout's ratio must be in [0, 1) in training mode, got {}", ratio);
    }
    OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
    // ONNX generates a seed when the attribute is absent; octet stays reproducible with 0.
    OCTET_ASSIGN_OR_RETURN(int64_t seed, args.node.attributes.GetInt("seed", 0));
    auto kernel = MakeKernel([ratio, seed, mask](const OpRunArgs& r) -> Status {
      const int64_t n = r.outputs[0].NumElements();
      std::vector<uint8_t> own(mask ? 0 : static_cast<size_t>(n));  // the mask, when the node does not output it
      uint8_t* keep = mask ? r.outputs[1].data<uint8_t>() : own.data();
      DropoutKeepMask(static_cast<uint64_t>(seed), ratio, n, keep);
      const float scale = 1.0f / (1.0f - ratio);
      const float* x = r.inputs[0].data<float>();
      float* y = r.outputs[0].data<float>();
      for (int64_t i = 0; i < n; ++i) y[i] = keep[i] != 0 ? x[i] * scale : 0.0f;
      return OkStatus();
    });
    return MakePrepared(std::move(outs), std::move(kernel), "dropout_training_mt19937");
  }
  if (!mask) return MakePrepared(std::move(outs), CopyKernel(), "dropout_identity");
  // The mask (bool, held as u8) is all true: nothing is dropped.
  auto kernel = MakeKernel([](const OpRunArgs& r) -> Status {
    if (r.outputs[0].SizeBytes() > 0) {
      std::memcpy(r.outputs[0].raw_data(), r.inputs[0].raw_data(), r.outputs[0].SizeBytes());
    }
    if (r.outputs[1].SizeBytes() > 0) std::memset(r.outputs[1].raw_data(), 1, r.outputs[1].SizeBytes());
    return OkStatus();
  });
  return MakePrepared(std::move(outs), std::move(kernel), "dropout_identity_mask");
}

}  // namespace

Status RegisterReshapeOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kReshape, PrepareReshape));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kFlatten, PrepareFlatten));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kSqueeze, PrepareSqueeze));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kUnsqueeze, PrepareUnsqueeze));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kIdentity, PrepareIdentity));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kDropout, PrepareDropout));
  return OkStatus();
}

}  // namespace octet::float_ops
