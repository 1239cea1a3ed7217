// QLayerNorm and QSoftmax (see qrow_ops.h).
#include "ops/int8/qrow_ops.h"

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/int8/activation_qparams.h"
#include "ops/int8/int8_ops.h"
#include "ops/reference/qlayernorm_reference.h"
#include "ops/reference/qsoftmax_reference.h"
#include "ops/ukernels/qlayernorm.h"
#include "ops/ukernels/qsoftmax.h"

namespace octet::int8_ops {
namespace {

// Rows per task: about 16k elements.
int64_t RowGrain(int64_t width) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)); }

// The width of the last axis, after checking that attribute `axis` names it.
Result<int64_t> LastAxisWidth(const OpPrepareArgs& args, int64_t default_axis) {
  const Shape& x = args.inputs[0].shape;
  if (x.rank() < 1) return InvalidArgument("input X must have rank >= 1, got a scalar");
  OCTET_ASSIGN_OR_RETURN(const int64_t axis, args.node.attributes.GetInt("axis", default_axis));
  if (axis != -1 && axis != x.rank() - 1) {
    return Unimplemented(
        "attribute axis {} is not the last axis of X {}: the "
        "int8 operator works over the last axis "
        "only (keep the node float with --skip)",
        axis, x);
  }
  return x.dim(x.rank() - 1);
}

// Runs row(x_row, y_row) over every row of the (X, Y) dtype pair.
template <typename Fn>
std::unique_ptr<OpKernel> RowKernel(DType x_dtype, DType y_dtype, int64_t width, Fn row) {
  return MakeKernel([=](const OpRunArgs& r) -> Status {
    const int64_t rows = width == 0 ? 0 : r.outputs[0].NumElements() / width;
    auto run = [&](auto* x, auto* y) {
      ParallelFor(r.context, rows, RowGrain(width), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) row(x + i * width, y + i * width);
      });
    };
    const bool xu = x_dtype == DType::kU8, yu = y_dtype == DType::kU8;
    const void* x = r.inputs[0].raw_data();
    void* y = r.outputs[0].raw_data();
    if (xu && yu) run(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
    if (xu && !yu) run(static_cast<const uint8_t*>(x), static_cast<int8_t*>(y));
    if (!xu && yu) run(static_cast<const int8_t*>(x), static_cast<uint8_t*>(y));
    if (!xu && !yu) run(static_cast<const int8_t*>(x), static_cast<int8_t*>(y));
    return OkStatus();
  });
}

// A constant f32 input with `width` elements, as a vector (empty when the optional input is absent).
Result<std::vector<float>> ConstantVector(const OpPrepareArgs& args, size_t slot, const char* role, int64_t width) {
  if (slot >= args.inputs.size() || !args.inputs[slot].present) return std::vector<float>{};
  const ValueInfo& v = args.inputs[slot];
  if (v.constant == nullptr || v.dtype != DType::kF32 || v.constant->NumElements() != width) {
    return InvalidArgument(
        "input {} ({}) '{}' must be a constant f32 with {} "
        "elements (the last axis of X)",
        slot, role, v.name, width);
  }
  const float* p = v.constant->data<float>();
  return std::vector<float>(p, p + width);
}

Result<PreparedOp> PrepareQLayerNorm(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 2, 3, 1, 1));
  OCTET_ASSIGN_OR_RETURN(const QActivation qx, ReadInputActivation(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QActivation qy, ReadOutputActivation(args, 0, "Y"));
  OCTET_ASSIGN_OR_RETURN(const int64_t width, LastAxisWidth(args, -1));
  OCTET_ASSIGN_OR_RETURN(const float epsilon, args.node.attributes.GetFloat("epsilon", 1e-5f));
  OCTET_ASSIGN_OR_RETURN(const std::vector<float> gamma, ConstantVector(args, 1, "Scale", width));
  if (gamma.empty()) return InvalidArgument("input 1 (Scale) is required");
  OCTET_ASSIGN_OR_RETURN(const std::vector<float> beta, ConstantVector(args, 2, "B", width));
  OCTET_ASSIGN_OR_RETURN(reference::QLayerNormParams p,
                         reference::MakeQLayerNormParams(width, qx.scale, qx.zero_point, epsilon, gamma, beta, qy.scale,
                                                         qy.zero_point, qy.quant_min, qy.quant_max));
  auto params = std::make_shared<const reference::QLayerNormParams>(std::move(p));
  // u8 -> u8 (what the presets give) through the ISA's row kernel; the other dtype pairs through the reference.
  const auto& u8 = SelectUkernel(args.context, QLayerNormU8Ukernels());
  const QLayerNormU8UkernelFn u8_fn = u8.fn;
  auto kernel = RowKernel(qx.dtype, qy.dtype, width, [params, u8_fn](const auto* x, auto* y) {
    using X = std::remove_cv_t<std::remove_pointer_t<decltype(x)>>;
    using Y = std::remove_pointer_t<decltype(y)>;
    if constexpr (std::is_same_v<X, uint8_t> && std::is_same_v<Y, uint8_t>) {
      u8_fn(*params, x, y);
    } else {
      reference::QLayerNormRow(*params, x, y);
    }
  });
  const bool both_u8 = qx.dtype == DType::kU8 && qy.dtype == DType::kU8;
  return float_ops::MakePrepared({{qy.dtype, args.inputs[0].shape}}, std::move(kernel),
                                 both_u8 ? fmt::format("qlayernorm_u8_u8/{}", u8.name)
                                         : fmt::format("qlayernorm_{}_{}", DTypeName(qx.dtype), DTypeName(qy.dtype)));
}

// reference::QSoftmaxRow with its per-element 64-bit division floor(N / D) (N = e M + D / 2, D = S 2^16) replaced by
// a double estimate and an exact integer correction: while S < 2^40, N and D stay below 2^57, the estimate is
// within 1 of the quotient and q D, (q + 1) D do not overflow, so the codes equal the reference's. Larger sums (rows
// of more than 2^17 elements) run the reference.
template <typename X, typename Y>
void QSoftmaxRowByReciprocal(const reference::QSoftmaxParams& p, int64_t n, const X* x, Y* y) {
  X max = x[0];
  for (int64_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  uint64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += p.exp_table[static_cast<size_t>(int32_t{max} - int32_t{x[i]})];
  if (sum >= (uint64_t{1} << 40)) {
    reference::QSoftmaxRow(p, n, x, y);
    return;
  }
  const uint64_t den = sum << 16;
  const uint64_t half = den >> 1;
  const double inv = 1.0 / static_cast<double>(den);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t num = p.exp_table[static_cast<size_t>(int32_t{max} - int32_t{x[i]})] * p.multiplier + half;
    auto q = static_cast<uint64_t>(static_cast<double>(static_cast<int64_t>(num)) * inv);
    if (q * den > num) {
      --q;
    } else if ((q + 1) * den <= num) {
      ++q;
    }
    int64_t code = static_cast<int64_t>(q) + p.y_zp;
    code = std::clamp<int64_t>(code, p.y_quant_min, p.y_quant_max);
    y[i] = static_cast<Y>(code);
  }
}

Result<PreparedOp> PrepareQSoftmax(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(const QActivation qx, ReadInputActivation(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QActivation qy, ReadOutputActivation(args, 0, "Y"));
  OCTET_ASSIGN_OR_RETURN(const int64_t width, LastAxisWidth(args, -1));
  if (width > (int64_t{1} << 24)) {
    return InvalidArgument(
        "the last axis of X has {} elements; the int8 "
        "Softmax takes at most 2^24",
        width);
  }
  OCTET_ASSIGN_OR_RETURN(reference::QSoftmaxParams p,
                         reference::MakeQSoftmaxParams(qx.scale, qy.scale, qy.zero_point, qy.quant_min, qy.quant_max));
  auto params = std::make_shared<const reference::QSoftmaxParams>(p);
  // u8 -> u8 through the ISA's SIMD row kernel where one is enabled; the rest by the reciprocal row above.
  const auto& u8 = SelectUkernel(args.context, QSoftmaxU8Ukernels());
  const QSoftmaxU8UkernelFn u8_fn = u8.isa == Isa::kScalar ? nullptr : u8.fn;
  auto kernel = RowKernel(qx.dtype, qy.dtype, width, [params, width, u8_fn](const auto* x, auto* y) {
    using X = std::remove_cv_t<std::remove_pointer_t<decltype(x)>>;
    using Y = std::remove_pointer_t<decltype(y)>;
    if constexpr (std::is_same_v<X, uint8_t> && std::is_same_v<Y, uint8_t>) {
      if (u8_fn != nullptr && width > 0) {
        u8_fn(*params, width, x, y);
        return;
      }
    }
    QSoftmaxRowByReciprocal(*params, width, x, y);
  });
  const bool simd = u8_fn != nullptr && qx.dtype == DType::kU8 && qy.dtype == DType::kU8;
  return float_ops::MakePrepared({{qy.dtype, args.inputs[0].shape}}, std::move(kernel),
                                 simd ? fmt::format("qsoftmax_table_u8_u8/{}", u8.name)
                                      : fmt::format("qsoftmax_table_{}_{}", DTypeName(qx.dtype), DTypeName(qy.dtype)));
}

}  // namespace

Status RegisterQRowOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQLayerNorm, PrepareQLayerNorm));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQSoftmax, PrepareQSoftmax));
  return OkStatus();
}

}  // namespace octet::int8_ops
