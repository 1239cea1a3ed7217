// Pad: each output index maps, dim by dim, to an input index or to the constant.
#include "ops/float/pad.h"

#include <cstring>

#include <fmt/ranges.h>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

enum class PadMode { kConstant, kReflect, kEdge };

// Source index along one dim for output position o, or -1 for the constant.
int64_t SourceIndex(PadMode mode, int64_t o, int64_t begin, int64_t in) {
  int64_t i = o - begin;
  if (i >= 0 && i < in) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : in - 1;
    case PadMode::kReflect: {
      if (in == 1) return 0;
      const int64_t period = 2 * (in - 1);
      int64_t r = i % period;
      if (r < 0) r += period;
      return r < in ? r : period - r;
    }
  }
  return -1;
}

Result<PreparedOp> PreparePad(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 4));
  if (Present(args, 3)) return Unimplemented("the axes input of Pad (opset 18) is not supported");
  const ValueInfo& x = args.inputs[0];
  const int rank = x.shape.rank();
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConstantInts(args, 1, "pads"));
  if (static_cast<int>(pads.size()) != 2 * rank) {
    return InvalidArgument("pads must have {} values for input {}, got {}", 2 * rank, x.shape, pads.size());
  }
  OCTET_ASSIGN_OR_RETURN(std::string mode_name, args.node.attributes.GetString("mode", "constant"));
  PadMode mode;
  if (mode_name == "constant") {
    mode = PadMode::kConstant;
  } else if (mode_name == "reflect") {
    mode = PadMode::kReflect;
  } else if (mode_name == "edge") {
    mode = PadMode::kEdge;
  } else {
    return InvalidArgument("mode must be constant, reflect or edge, got '{}'", mode_name);
  }
  std::vector<uint8_t> fill(DTypeSize(x.dtype), 0);
  if (Present(args, 2)) {
    const ValueInfo& c = args.inputs[2];
    if (c.dtype != x.dtype || c.shape.NumElements() != 1) {
      return InvalidArgument("constant_value must be one {} value, got {} {}", x.dtype, c.dtype, c.shape);
    }
    OCTET_ASSIGN_OR_RETURN(const Tensor* value, InputData(c));
    std::memcpy(fill.data(), value->raw_data(), fill.size());
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) {
    const int64_t out = x.shape.dim(d) + pads[static_cast<size_t>(d)] + pads[static_cast<size_t>(d + rank)];
    if (out < 0) return InvalidArgument("pads [{}] crop more than dim {} holds", fmt::join(pads, ", "), d);
    dims.push_back(out);
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, dims));
  dims.clear();
  std::vector<std::vector<int64_t>> maps;  // per dim: output index -> input index or -1
  for (int d = 0; d < rank; ++d) {
    const int64_t in = x.shape.dim(d), b = pads[static_cast<size_t>(d)], e = pads[static_cast<size_t>(d + rank)];
    const int64_t out = in + b + e;
    if (out < 0) return InvalidArgument("pads [{}] crop more than dim {} holds", fmt::join(pads, ", "), d);
    if (mode != PadMode::kConstant && in == 0 && out > 0) {
      return InvalidArgument("{} padding of an empty dim is undefined", mode_name);
    }
    if (mode == PadMode::kReflect && (b >= in || e >= in) && in > 1) {
      return InvalidArgument("reflect pads must be smaller than the dim ({}), got [{}]", in, fmt::join(pads, ", "));
    }
    OCTET_RETURN_IF_ERROR(CheckedProduct(std::vector<int64_t>{out}).status());
    dims.push_back(out);
    std::vector<int64_t> map(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) map[static_cast<size_t>(o)] = SourceIndex(mode, o, b, in);
    maps.push_back(std::move(map));
  }
  OCTET_RETURN_IF_ERROR(CheckedProduct(dims).status());
  const std::vector<int64_t> in_strides = RowMajorStrides(x.shape);
  const size_t element = DTypeSize(x.dtype);
  Shape out_shape(dims);
  const int64_t total = out_shape.NumElements();
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const auto* src = static_cast<const std::byte*>(r.inputs[0].raw_data());
    auto* dst = static_cast<std::byte*>(r.outputs[0].raw_data());
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t i = 0; i < total; ++i) {
      int64_t off = 0;
      bool constant = false;
      for (int d = 0; d < rank; ++d) {
        const int64_t s = maps[static_cast<size_t>(d)][static_cast<size_t>(idx[static_cast<size_t>(d)])];
        if (s < 0) {
          constant = true;
          break;
        }
        off += s * in_strides[static_cast<size_t>(d)];
      }
      std::memcpy(dst + static_cast<size_t>(i) * element,
                  constant ? static_cast<const void*>(fill.data()) : src + static_cast<size_t>(off) * element, element);
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < dims[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
    return OkStatus();
  });
  return MakePrepared({{x.dtype, std::move(out_shape)}}, std::move(kernel), fmt::format("pad_{}", mode_name));
}

}  // namespace

Status RegisterPadOps(OpRegistry& registry) { return RegisterFloatOp(registry, FloatOp::kPad, PreparePad); }

}  // namespace octet::float_ops
