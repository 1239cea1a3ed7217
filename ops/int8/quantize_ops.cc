// Quantize, Dequantize and Requantize: validation at Prepare, then ops/quantize.h's kernels (the default quantize
// and every dequantize), a per-element loop over the reference (the other quantize roundings and non-finite
// policies) or a 256-entry table (requantize).
#include "ops/int8/quantize_ops.h"

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/int8/int8_ops.h"
#include "ops/int8/linear_output.h"
#include "ops/quantize.h"
#include "ops/reference/quantize_reference.h"
#include "ops/reference/requantize_reference.h"

namespace octet::int8_ops {
namespace {

using float_ops::CheckArity;
using float_ops::MakePrepared;

// Elements per parallel tile: a pure function of nothing, so the split never depends on the thread count.
constexpr int64_t kQuantizeOpTileElements = int64_t{1} << 16;

// A ConstTensorView / TensorView seen as a Tensor for the Tensor-based functions of ops/ (no copy). The executor's
// buffers are aligned and padded as Tensor::Borrow requires; the input is only read.
Tensor AsTensor(const ConstTensorView& v) {
  return Tensor::Borrow(v.dtype(), v.shape(), const_cast<void*>(v.raw_data()));  // read through const Tensor& only
}
Tensor AsTensor(const TensorView& v) { return Tensor::Borrow(v.dtype(), v.shape(), v.raw_data()); }

// ---- Quantize ----

using Rounding = reference::QuantizeOpRounding;
enum class NonFinite : uint8_t { kError, kQuantMin };

struct QuantizeRule {
  Rounding rounding = Rounding::kHalfEven;
  NonFinite non_finite = NonFinite::kError;
};

// One element by the rule; `nan` is set when x is NaN (the caller fails the Run in the error mode).
template <typename T>
T QuantizeOne(float x, float scale, float inv_scale, int32_t zp, int32_t qmin, int32_t qmax, QuantizeRule rule,
              bool* nan) {
  if (std::isnan(x)) *nan = true;
  return reference::QuantizeOpValue<T>(x, scale, inv_scale, zp, qmin, qmax, rule.rounding,
                                       rule.non_finite == NonFinite::kQuantMin);
}

// Runs fn(offset, count, channel) over runs of elements sharing one channel's qparams, in tiles of the shape alone.
template <typename Fn>
void ForEachChannelRun(const Context& context, const Shape& shape, const QParams& qp, Fn&& fn) {
  const int64_t n = shape.NumElements();
  if (!qp.per_channel()) {
    ParallelFor(context, n, kQuantizeOpTileElements, [&](int64_t begin, int64_t end) { fn(begin, end - begin, 0); });
    return;
  }
  const int64_t channels = shape.dim(qp.axis());
  const int64_t inner = shape.Product(qp.axis() + 1, shape.rank());
  const int64_t rows = shape.Product(0, qp.axis()) * channels;
  if (inner == 0 || rows == 0) return;
  ParallelFor(context, rows, std::max<int64_t>(1, kQuantizeOpTileElements / inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) fn(r * inner, inner, r % channels);
  });
}

template <typename T>
Status QuantizeByRule(const OpRunArgs& r, const QParams& qp, QuantizeRule rule, const std::string& name) {
  const float* x = r.inputs[0].data<float>();
  T* y = r.outputs[0].data<T>();
  std::atomic<bool> any_nan{false};
  ForEachChannelRun(r.context, r.inputs[0].shape(), qp, [&](int64_t offset, int64_t count, int64_t c) {
    const size_t ch = static_cast<size_t>(c);
    const float scale = qp.scales()[ch], inv_scale = 1.0f / scale;
    const int32_t zp = qp.zero_points()[ch];
    bool nan = false;
    for (int64_t i = offset; i < offset + count; ++i) {
      y[i] = QuantizeOne<T>(x[i], scale, inv_scale, zp, qp.quant_min(), qp.quant_max(), rule, &nan);
    }
    if (nan) any_nan.store(true, std::memory_order_relaxed);
  });
  if (any_nan.load() && rule.non_finite == NonFinite::kError) {
    const int64_t n = r.inputs[0].NumElements();
    int64_t first = 0;
    while (first < n && !std::isnan(x[first])) ++first;
    return InvalidArgument("failed to quantize '{}': NaN at flat index {} of shape {} (non_finite \"error\"; "
                           "\"quant_min\" maps NaN to quant_min)",
                           name, first, r.inputs[0].shape());
  }
  return OkStatus();
}

Result<PreparedOp> PrepareQuantize(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(float_ops::CheckInput(args, 0, DType::kF32));
  OCTET_ASSIGN_OR_RETURN(const QParams* y_qp, OutputQParams(args, 0));
  const Shape& shape = args.inputs[0].shape;
  OCTET_RETURN_IF_ERROR(y_qp->ValidateFor(shape, OutputName(args, 0)));
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(const std::string rounding, at.GetString("rounding", "half_even"));
  OCTET_ASSIGN_OR_RETURN(const std::string non_finite, at.GetString("non_finite", "error"));
  QuantizeRule rule;
  if (rounding == "half_away") {
    rule.rounding = Rounding::kHalfAway;
  } else if (rounding != "half_even") {
    return InvalidArgument("attribute 'rounding' must be \"half_even\" or \"half_away\", got \"{}\"", rounding);
  }
  if (non_finite == "quant_min") {
    rule.non_finite = NonFinite::kQuantMin;
  } else if (non_finite != "error") {
    return InvalidArgument("attribute 'non_finite' must be \"error\" or \"quant_min\", got \"{}\"", non_finite);
  }
  const DType dtype = y_qp->dtype();
  std::string name(args.inputs[0].name.empty() ? "x" : args.inputs[0].name);
  if (rule.rounding == Rounding::kHalfEven && rule.non_finite == NonFinite::kError) {
    // The default: ops/quantize.h's SIMD kernels (chosen here, once), NaN an error naming the value.
    OCTET_ASSIGN_OR_RETURN(const QuantizePlan plan, QuantizePlan::Create(args.context, dtype, name));
    auto kernel = MakeKernel([qp = *y_qp, name, plan](const OpRunArgs& r) -> Status {
      const Tensor x = AsTensor(r.inputs[0]);
      Tensor y = AsTensor(r.outputs[0]);
      return plan.Run(r.context, x, qp, y, QuantizeOptions{NanPolicy::kError, name});
    });
    return MakePrepared({{dtype, shape}}, std::move(kernel), plan.kernel_name());  // the ukernel that runs
  }
  auto kernel = MakeKernel([qp = *y_qp, rule, name](const OpRunArgs& r) -> Status {
    switch (qp.dtype()) {
      case DType::kU8: return QuantizeByRule<uint8_t>(r, qp, rule, name);
      case DType::kS8: return QuantizeByRule<int8_t>(r, qp, rule, name);
      case DType::kS32: return QuantizeByRule<int32_t>(r, qp, rule, name);
      case DType::kF32: break;
    }
    return Internal("quantize to {}", qp.dtype());
  });
  return MakePrepared({{dtype, shape}}, std::move(kernel),
                      fmt::format("quantize_f32_{}_{}_{}_scalar", dtype, rounding, non_finite));
}

// ---- Dequantize ----

Result<PreparedOp> PrepareDequantize(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  const ValueInfo& x = args.inputs[0];
  if (x.dtype != DType::kU8 && x.dtype != DType::kS8 && x.dtype != DType::kS32) {
    return InvalidArgument("input {} must be u8, s8 or s32, got {}", InputName(args, 0), x.dtype);
  }
  OCTET_ASSIGN_OR_RETURN(const QParams* x_qp, InputQParams(args, 0, "X"));
  if (x_qp->dtype() != x.dtype) {
    return InvalidArgument("input {} is {} but its qparams are {}", InputName(args, 0), x.dtype, x_qp->dtype());
  }
  OCTET_RETURN_IF_ERROR(x_qp->ValidateFor(x.shape, InputName(args, 0)));
  OCTET_ASSIGN_OR_RETURN(const DequantizePlan plan, DequantizePlan::Create(args.context, x.dtype));
  auto kernel = MakeKernel([qp = *x_qp, plan](const OpRunArgs& r) -> Status {
    OCTET_ASSIGN_OR_RETURN(const QTensor q, QTensor::Create(AsTensor(r.inputs[0]), qp));
    Tensor y = AsTensor(r.outputs[0]);
    return plan.Run(r.context, q, y);
  });
  return MakePrepared({{DType::kF32, x.shape}}, std::move(kernel), plan.kernel_name());
}

// ---- Requantize ----

Result<PreparedOp> PrepareRequantize(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(const QParams* x_qp, ActivationInputQParams(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QParams* y_qp, ActivationOutputQParams(args));
  const float m = reference::RequantizeQ8Multiplier(x_qp->scale(), y_qp->scale());
  if (!std::isfinite(m) || !(m > 0.0f)) {
    return InvalidArgument("the multiplier input scale / output scale = {} / {} must be finite and > 0, got {}",
                           x_qp->scale(), y_qp->scale(), m);
  }
  // Every 8-bit input has one output: the table holds the reference's result for each byte pattern.
  auto table = std::make_shared<std::array<uint8_t, 256>>();
  const bool x_signed = x_qp->dtype() == DType::kS8;
  for (int b = 0; b < 256; ++b) {
    const int32_t x = x_signed ? static_cast<int32_t>(static_cast<int8_t>(b)) : b;
    const int32_t y = reference::RequantizeQ8Value(x, x_qp->zero_point(), m, y_qp->zero_point(), y_qp->quant_min(),
                                                   y_qp->quant_max());
    (*table)[static_cast<size_t>(b)] = static_cast<uint8_t>(y);  // the s8 bit pattern for s8 outputs
  }
  auto kernel = MakeKernel([table](const OpRunArgs& r) -> Status {
    const auto* x = static_cast<const uint8_t*>(r.inputs[0].raw_data());
    auto* y = static_cast<uint8_t*>(r.outputs[0].raw_data());
    const uint8_t* t = table->data();
    ParallelFor(r.context, r.inputs[0].NumElements(), kQuantizeOpTileElements, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = t[x[i]];
    });
    return OkStatus();
  });
  return MakePrepared({{y_qp->dtype(), args.inputs[0].shape}}, std::move(kernel),
                      fmt::format("requantize_{}_{}_fp32_table", x_qp->dtype(), y_qp->dtype()));
}

}  // namespace

Status RegisterQuantizeOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQuantize, PrepareQuantize));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kDequantize, PrepareDequantize));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kRequantize, PrepareRequantize));
  return OkStatus();
}

}  // namespace octet::int8_ops
