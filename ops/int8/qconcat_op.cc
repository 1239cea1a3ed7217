// QConcat: one row of every input per outer index (the dims before the axis), copied or translated by table.
#include "ops/int8/qconcat_op.h"

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/int8/activation_qparams.h"
#include "ops/int8/int8_ops.h"
#include "ops/reference/qconcat_reference.h"

namespace octet::int8_ops {
namespace {

struct ConcatInput {
  int64_t row = 0;         // elements per outer index: dim(axis) * inner
  int64_t y_offset = 0;    // where the row starts in y's outer row
  bool requantize = false;
  std::array<uint8_t, 256> table{};  // y code (as a byte) by x code (as a byte)
};

struct ConcatPlan {
  int64_t outer = 1, y_row = 0;
  std::vector<ConcatInput> inputs;
};

void RunConcat(const OpRunArgs& r, const ConcatPlan& plan) {
  auto* y = static_cast<uint8_t*>(r.outputs[0].raw_data());
  const int64_t rows_per_tile = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(plan.y_row, 1));
  ParallelFor(r.context, plan.outer, rows_per_tile, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      for (size_t i = 0; i < plan.inputs.size(); ++i) {
        const ConcatInput& in = plan.inputs[i];
        if (in.row == 0) continue;
        const auto* src = static_cast<const uint8_t*>(r.inputs[i].raw_data()) + o * in.row;
        uint8_t* dst = y + o * plan.y_row + in.y_offset;
        if (in.requantize) {
          for (int64_t k = 0; k < in.row; ++k) dst[k] = in.table[src[k]];
        } else {
          std::memcpy(dst, src, static_cast<size_t>(in.row));
        }
      }
    }
  });
}

Result<PreparedOp> PrepareQConcat(const OpPrepareArgs& args) {
  if (args.inputs.empty()) return InvalidArgument("QConcat needs at least one input");
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, args.inputs.size(), args.inputs.size()));
  OCTET_ASSIGN_OR_RETURN(const QActivation qy, ReadOutputActivation(args, 0, "concat_result"));
  const Shape& first = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(const int64_t axis_attr, args.node.attributes.GetInt("axis"));
  OCTET_ASSIGN_OR_RETURN(const int axis, float_ops::NormalizeAxis(axis_attr, first.rank()));
  std::vector<int64_t> out_dims = first.dims();
  out_dims[static_cast<size_t>(axis)] = 0;
  auto plan = std::make_shared<ConcatPlan>();
  plan->outer = first.Product(0, axis);
  const int64_t inner = first.Product(axis + 1, first.rank());
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const std::string what = InputLabel(args, i, "inputs");
    OCTET_ASSIGN_OR_RETURN(const QActivation qx, ReadInputActivation(args, i, "inputs"));
    if (qx.dtype != qy.dtype) return InvalidArgument("{} is {} but the output is {}", what, qx.dtype, qy.dtype);
    const Shape& s = args.inputs[i].shape;
    if (s.rank() != first.rank()) {
      return InvalidArgument("{} has shape {}, of another rank than input 0's {}", what, s, first);
    }
    for (int d = 0; d < s.rank(); ++d) {
      if (d != axis && s.dim(d) != first.dim(d)) {
        return InvalidArgument("{} has shape {}, which differs from input 0's {} outside axis {}", what, s, first,
                               axis);
      }
    }
    out_dims[static_cast<size_t>(axis)] += s.dim(axis);
    ConcatInput in;
    in.row = s.dim(axis) * inner;
    in.y_offset = plan->y_row;
    plan->y_row += in.row;
    if (!qx.SameAs(qy)) {
      const float m = reference::QConcatMultiplier(qx.scale, qy.scale);
      if (!std::isfinite(m)) {
        return InvalidArgument("{}: the requantization multiplier x_scale / y_scale = {} / {} is not finite", what,
                               qx.scale, qy.scale);
      }
      in.requantize = true;
      for (int code = 0; code < 256; ++code) {
        const int32_t x = qx.dtype == DType::kU8 ? code : static_cast<int8_t>(static_cast<uint8_t>(code));
        const int32_t v =
            reference::QConcatRequantizeValue(x, qx.zero_point, m, qy.zero_point, qy.quant_min, qy.quant_max);
        in.table[static_cast<size_t>(code)] = static_cast<uint8_t>(v);
      }
    }
    plan->inputs.push_back(in);
  }
  OCTET_RETURN_IF_ERROR(float_ops::CheckOutputElements(args, out_dims));
  auto kernel = MakeKernel([plan](const OpRunArgs& r) -> Status {
    RunConcat(r, *plan);
    return OkStatus();
  });
  return float_ops::MakePrepared({{qy.dtype, Shape(std::move(out_dims))}}, std::move(kernel),
                                 fmt::format("qconcat_{}", DTypeName(qy.dtype)));
}

}  // namespace

Status RegisterQConcatOp(OpRegistry& registry) { return RegisterInt8Op(registry, Int8Op::kQConcat, PrepareQConcat); }

}  // namespace octet::int8_ops
