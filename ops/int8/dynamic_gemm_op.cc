// DynamicQGemm and DynamicQMatMul: ChooseQuantizationParams over the live range of x (or of each row, per token),
// quantize to u8 in the scratch, the int8 GEMM with the float output stage (reference::DynamicQGemm,
// reference::PerTokenDynamicQGemm).
#include "ops/int8/dynamic_gemm_op.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "core/ukernel_list.h"
#include "ops/float/op_util.h"
#include "ops/int8/int8_ops.h"
#include "ops/reference/dynamic_qgemm_reference.h"
#include "ops/reference/qgemm_reference.h"

namespace octet {

using float_ops::CheckArity;
using float_ops::CheckInput;
using float_ops::Present;

Result<DynamicGemm> DynamicGemm::Create(const Context& context, const QTensor& weights, std::vector<float> bias,
                                        bool reduce_range, std::string_view what, bool per_token) {
  QGemmPrepackOptions options;
  options.activation_dtype = DType::kU8;
  DynamicGemm g;
  auto packed = PackedWeights::Prepack(context, weights, options);
  if (!packed.ok()) {
    return Status(packed.status().code(), fmt::format("weight '{}': {}", what, packed.status().message()));
  }
  g.packed_ = std::move(*packed);
  if (!bias.empty() && static_cast<int64_t>(bias.size()) != g.packed_.n()) {
    return InvalidArgument("bias of '{}' must have N = {} values, got {}", what, g.packed_.n(), bias.size());
  }
  for (size_t j = 0; j < bias.size(); ++j) {
    if (!std::isfinite(bias[j])) return InvalidArgument("bias of '{}' must be finite, got {} at {}", what, bias[j], j);
  }
  g.bias_ = std::move(bias);
  g.reduce_range_ = reduce_range;
  g.per_token_ = per_token;
  if (per_token) {
    const QParams& wq = weights.qparams();
    for (int32_t zp : wq.zero_points()) {
      if (zp != 0) return InvalidArgument("weight '{}' must be symmetric (zero point 0) per token, got {}", what, zp);
    }
    const int64_t n = g.packed_.n(), k = g.packed_.k();
    const int8_t* w = weights.values().data<int8_t>();
    g.w_col_sums_.assign(static_cast<size_t>(n), 0);
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += w[j * k + p];
      g.w_col_sums_[static_cast<size_t>(j)] = sum;
    }
    g.w_scales_.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) g.w_scales_[static_cast<size_t>(j)] = wq.scales()[wq.per_channel() ? j : 0];
    OCTET_ASSIGN_OR_RETURN(QParams raw, QParams::PerTensor(DType::kU8, 1.0f, 0, 0, reduce_range ? 127 : 255));
    OCTET_ASSIGN_OR_RETURN(g.raw_plan_, QGemmPlan::Create(g.packed_, raw, QGemmOutput::Int32()));
  }
  const auto& quantize = SelectUkernel(context, QuantizeUkernels<uint8_t>());
  g.quantize_ = quantize.fn;
  g.kernel_name_ = fmt::format("{}_u8s8_f32+{}", per_token ? "per_token_qgemm" : "dynamic_qgemm", quantize.name);
  return g;
}

size_t DynamicGemm::ScratchBytes(int64_t m) const {
  const auto rows = static_cast<size_t>(m);
  // Per token: the int32 sums first (the scratch is aligned for them), then the u8 rows.
  return rows * static_cast<size_t>(k()) + (per_token_ ? rows * static_cast<size_t>(n()) * sizeof(int32_t) : 0);
}

namespace {
// The live range of n finite floats ([0, 0] when n is 0); fails naming `what` and element `offset + i` otherwise.
Status RowLiveRange(const float* x, size_t n, size_t offset, std::string_view what, float& lo, float& hi) {
  lo = hi = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) {
      return InvalidArgument("dynamic quantization of '{}': element {} is {}, not finite", what, offset + i, v);
    }
    if (i == 0) {
      lo = hi = v;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return OkStatus();
}
}  // namespace

Result<QParams> DynamicGemm::RunPerToken(const Context& context, const float* x, int64_t m, std::byte* scratch,
                                         float* y, size_t y_stride, std::string_view what) const {
  const auto k = static_cast<size_t>(packed_.k()), n = static_cast<size_t>(packed_.n());
  const auto rows = static_cast<size_t>(m);
  const int32_t quant_max = reduce_range_ ? 127 : 255;
  auto* acc = reinterpret_cast<int32_t*>(scratch);
  auto* a = reinterpret_cast<uint8_t*>(scratch + rows * n * sizeof(int32_t));
  std::vector<float> scales(rows);
  std::vector<int32_t> zero_points(rows);
  for (size_t i = 0; i < rows; ++i) {
    float lo = 0.0f, hi = 0.0f;
    OCTET_RETURN_IF_ERROR(RowLiveRange(x + i * k, k, i * k, what, lo, hi));
    const reference::ChosenQParams chosen =
        reference::ChooseQuantizationParams(lo, hi, 0, 255, false, false, reduce_range_);
    scales[i] = static_cast<float>(chosen.scale);
    zero_points[i] = chosen.zero_point;
    QuantizeParams qp;
    qp.inv_scale = 1.0f / scales[i];
    qp.zero_point = chosen.zero_point;
    qp.quant_min = 0;
    qp.quant_max = quant_max;
    quantize_(k, x + i * k, a + i * k, qp);
  }
  const float first_scale = rows > 0 ? scales[0] : 0.1f;
  OCTET_ASSIGN_OR_RETURN(QParams first,
                         QParams::PerTensor(DType::kU8, first_scale, rows > 0 ? zero_points[0] : 0, 0, quant_max));
  if (rows == 0) return first;
  // sum_k a * w with zero point 0, then minus zp_i * sum_k w[j][k]: the exact accumulator of row i's zero point
  // (it fits int32: the prepack bound holds for every zero point of the dtype).
  OCTET_RETURN_IF_ERROR(raw_plan_.RunRows(context, a, k, m, acc, n));
  for (size_t i = 0; i < rows; ++i) {
    const int64_t zp = zero_points[i];
    for (size_t j = 0; j < n; ++j) {
      const auto exact = static_cast<int32_t>(int64_t{acc[i * n + j]} - zp * w_col_sums_[j]);
      y[i * y_stride + j] =
          reference::DequantizeAccumulatorValue(exact, scales[i], w_scales_[j], bias_.empty() ? 0.0f : bias_[j]);
    }
  }
  return first;
}

Result<QParams> DynamicGemm::Run(const Context& context, const float* x, int64_t m, std::byte* scratch, float* y,
                                 size_t y_stride, std::string_view what) const {
  if (per_token_) return RunPerToken(context, x, m, scratch, y, y_stride, what);
  const int64_t k = packed_.k();
  const auto count = static_cast<size_t>(m * k);
  // The live range (finite values only: a NaN or Inf has no quantized meaning here).
  float lo = 0.0f, hi = 0.0f;
  for (size_t i = 0; i < count; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) {
      return InvalidArgument("dynamic quantization of '{}': element {} is {}, not finite", what, i, v);
    }
    if (i == 0) {
      lo = hi = v;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  const reference::ChosenQParams chosen = reference::ChooseQuantizationParams(lo, hi, 0, 255, false, false,
                                                                              reduce_range_);
  const int32_t quant_max = reduce_range_ ? 127 : 255;
  OCTET_ASSIGN_OR_RETURN(QParams a_qparams, QParams::PerTensor(DType::kU8, static_cast<float>(chosen.scale),
                                                              chosen.zero_point, 0, quant_max));
  if (m == 0) return a_qparams;
  auto* a = reinterpret_cast<uint8_t*>(scratch);
  QuantizeParams qp;
  qp.inv_scale = 1.0f / a_qparams.scale();
  qp.zero_point = chosen.zero_point;
  qp.quant_min = 0;
  qp.quant_max = quant_max;
  quantize_(count, x, a, qp);
  OCTET_ASSIGN_OR_RETURN(QGemmPlan plan, QGemmPlan::Create(packed_, a_qparams, QGemmOutput::Float(bias_)));
  OCTET_RETURN_IF_ERROR(plan.RunRows(context, a, static_cast<size_t>(k), m, y, y_stride));
  return a_qparams;
}

Status CheckDynamicWeight(const ValueInfo& info, int channel_axis, std::string_view what) {
  if (info.constant == nullptr) return InvalidArgument("{} must be a constant (prepacked at compile time)", what);
  if (info.dtype != DType::kS8) return InvalidArgument("{} must be s8, got {}", what, info.dtype);
  if (info.qparams == nullptr) return InvalidArgument("{} has no qparams", what);
  const QParams& q = *info.qparams;
  if (q.dtype() != DType::kS8) return InvalidArgument("{} must have s8 qparams, got {}", what, q.dtype());
  for (int32_t zp : q.zero_points()) {
    if (zp != 0) {
      return InvalidArgument("{} must be quantized symmetrically (zero point 0), got zero point {}", what, zp);
    }
  }
  if (q.per_channel() && q.axis() != channel_axis) {
    return InvalidArgument("{} must be per channel along its output-channel axis {}, got axis {}", what,
                           channel_axis, q.axis());
  }
  if (q.per_channel() && (info.shape.rank() <= channel_axis || q.num_channels() != info.shape.dim(channel_axis))) {
    return InvalidArgument("{} of shape {} has {} per-channel scales along axis {}", what, info.shape,
                           q.num_channels(), channel_axis);
  }
  return OkStatus();
}

Result<QTensor> DynamicGemmWeight(const ValueInfo& info, int channel_axis, std::string_view what) {
  OCTET_RETURN_IF_ERROR(CheckDynamicWeight(info, channel_axis, what));
  if (info.shape.rank() != 2) return InvalidArgument("{} must have rank 2, got shape {}", what, info.shape);
  const QParams& q = *info.qparams;
  if (channel_axis == 0) return QTensor::Create(*info.constant, q);
  // [K, N] -> [N, K].
  const int64_t k = info.shape.dim(0), n = info.shape.dim(1);
  OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(DType::kS8, Shape{n, k}));
  const int8_t* src = info.constant->data<int8_t>();
  int8_t* dst = t.data<int8_t>();
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) dst[j * k + i] = src[i * n + j];
  }
  OCTET_ASSIGN_OR_RETURN(QParams q0, QParams::Create(q.scheme(), q.dtype(), q.quant_min(), q.quant_max(),
                                                     q.scales(), q.zero_points(), 0));
  return QTensor::Create(std::move(t), std::move(q0));
}

namespace {

Result<bool> ReduceRange(const Node& node) {
  OCTET_ASSIGN_OR_RETURN(int64_t rr, node.attributes.GetInt("reduce_range", 0));
  if (rr != 0 && rr != 1) return InvalidArgument("reduce_range must be 0 or 1, got {}", rr);
  return rr != 0;
}

Result<bool> PerToken(const Node& node) {
  OCTET_ASSIGN_OR_RETURN(int64_t pt, node.attributes.GetInt("per_token", 0));
  if (pt != 0 && pt != 1) return InvalidArgument("per_token must be 0 or 1, got {}", pt);
  return pt != 0;
}

// Shared by both operators: x rows of K into y rows of N, scratch for the quantized rows.
Result<PreparedOp> MakeDynamicGemmKernel(std::shared_ptr<const DynamicGemm> gemm, int64_t m, Shape out) {
  // ScratchBytes(m) <= m (K + 4 N): checked for overflow first.
  OCTET_RETURN_IF_ERROR(float_ops::CheckedProduct(std::vector<int64_t>{m, gemm->k() + 4 * gemm->n()}).status());
  const size_t scratch = gemm->ScratchBytes(m);
  std::string name = gemm->kernel_name();
  auto kernel = MakeKernel([gemm, m](const OpRunArgs& r) -> Status {
    return gemm->Run(r.context, r.inputs[0].data<float>(), m, r.scratch.data(), r.outputs[0].data<float>(),
                     static_cast<size_t>(gemm->n()), "x")
        .status();
  });
  return float_ops::MakePrepared({{DType::kF32, std::move(out)}}, std::move(kernel), std::move(name), scratch);
}

Result<PreparedOp> PrepareDynamicQGemm(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_RETURN_IF_ERROR(float_ops::CheckRank(args, 0, 2, 2));
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t trans_a, at.GetInt("transA", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t trans_b, at.GetInt("transB", 0));
  OCTET_ASSIGN_OR_RETURN(float alpha, at.GetFloat("alpha", 1.0f));
  OCTET_ASSIGN_OR_RETURN(float beta, at.GetFloat("beta", 1.0f));
  if (trans_a != 0) return Unimplemented("transA must be 0, got {}", trans_a);
  if (trans_b != 0 && trans_b != 1) return InvalidArgument("transB must be 0 or 1, got {}", trans_b);
  if (alpha != 1.0f || beta != 1.0f) return Unimplemented("alpha and beta must be 1, got {} and {}", alpha, beta);
  OCTET_ASSIGN_OR_RETURN(bool reduce_range, ReduceRange(args.node));
  OCTET_ASSIGN_OR_RETURN(bool per_token, PerToken(args.node));
  OCTET_ASSIGN_OR_RETURN(QTensor w, DynamicGemmWeight(args.inputs[1], trans_b ? 0 : 1, "weight (input 1)"));
  const int64_t m = args.inputs[0].shape.dim(0), k = args.inputs[0].shape.dim(1);
  const int64_t n = w.values().shape().dim(0);
  if (w.values().shape().dim(1) != k) {
    return InvalidArgument("inner dimensions differ: x {} and weight {} (transB={})", args.inputs[0].shape,
                           args.inputs[1].shape, trans_b);
  }
  std::vector<float> bias;
  if (Present(args, 2)) {
    OCTET_RETURN_IF_ERROR(CheckInput(args, 2, DType::kF32));
    const ValueInfo& c = args.inputs[2];
    const bool row = c.shape == Shape{n} || c.shape == Shape{1, n};
    if (c.constant == nullptr || !row) {
      return InvalidArgument("bias (input 2) must be a constant of shape [{}] or [1, {}], got {}{}", n, n, c.shape,
                             c.constant == nullptr ? " (not constant)" : "");
    }
    const auto values = c.constant->values<float>();
    bias.assign(values.begin(), values.end());
  }
  OCTET_ASSIGN_OR_RETURN(DynamicGemm gemm, DynamicGemm::Create(args.context, w, std::move(bias), reduce_range,
                                                               "weight (input 1)", per_token));
  return MakeDynamicGemmKernel(std::make_shared<const DynamicGemm>(std::move(gemm)), m, Shape{m, n});
}

Result<PreparedOp> PrepareDynamicQMatMul(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  const Shape& x = args.inputs[0].shape;
  if (x.rank() < 1) return InvalidArgument("x (input 0) must have rank >= 1, got {}", x);
  OCTET_ASSIGN_OR_RETURN(bool reduce_range, ReduceRange(args.node));
  OCTET_ASSIGN_OR_RETURN(bool per_token, PerToken(args.node));
  OCTET_ASSIGN_OR_RETURN(QTensor w, DynamicGemmWeight(args.inputs[1], 1, "weight (input 1)"));
  const int64_t n = w.values().shape().dim(0), k = w.values().shape().dim(1);
  if (x.dim(x.rank() - 1) != k) {
    return InvalidArgument("inner dimensions differ: x {} and weight {}", x, args.inputs[1].shape);
  }
  const int64_t m = x.Product(0, x.rank() - 1);
  std::vector<int64_t> out = x.dims();
  out.back() = n;
  OCTET_ASSIGN_OR_RETURN(DynamicGemm gemm,
                         DynamicGemm::Create(args.context, w, {}, reduce_range, "weight (input 1)", per_token));
  return MakeDynamicGemmKernel(std::make_shared<const DynamicGemm>(std::move(gemm)), m, Shape(out));
}

}  // namespace

Status RegisterDynamicGemmOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kDynamicQGemm, PrepareDynamicQGemm));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kDynamicQMatMul, PrepareDynamicQMatMul));
  return OkStatus();
}

}  // namespace octet
