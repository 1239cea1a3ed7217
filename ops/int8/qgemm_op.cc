// QGemm and QMatMul: attributes, qparams and weights validated at Prepare, weights laid out as [N, K] and packed
// once; Run is one QGemmPlan::RunRows over the input rows.
#include "ops/int8/qgemm_op.h"

#include <string>
#include <utility>
#include <vector>

#include "ops/float/op_util.h"
#include "ops/int8/int8_ops.h"
#include "ops/int8/linear_output.h"
#include "ops/qgemm.h"

namespace octet::int8_ops {
namespace {

using float_ops::CheckArity;
using float_ops::MakePrepared;

// The weight as qgemm's [N, K] matrix (output channel j = row j) with per-channel qparams on axis 0: a copy of
// w [N, K] (channel_axis 0) or the transpose of w [K, N] (channel_axis 1).
Result<QTensor> WeightsNK(const OpPrepareArgs& args, const QParams& qp, int channel_axis) {
  const Tensor& w = *args.inputs[1].constant;
  const int64_t n = w.shape().dim(channel_axis), k = w.shape().dim(1 - channel_axis);
  if (qp.per_channel() && qp.axis() != channel_axis) {
    return InvalidArgument("input {} (W) {} must be per tensor or per channel on axis {} (output channels), got "
                           "axis {}",
                           InputName(args, 1), w.shape(), channel_axis, qp.axis());
  }
  if (qp.per_channel() && qp.num_channels() != n) {
    return InvalidArgument("input {} (W) has {} per-channel qparams for {} output channels", InputName(args, 1),
                           qp.num_channels(), n);
  }
  OCTET_ASSIGN_OR_RETURN(Tensor nk, Tensor::Create(DType::kS8, Shape{n, k}));
  const int8_t* src = w.data<int8_t>();
  int8_t* dst = nk.data<int8_t>();
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < k; ++i) dst[j * k + i] = channel_axis == 0 ? src[j * k + i] : src[i * n + j];
  }
  QParams nk_qp = qp;
  if (qp.per_channel() && channel_axis != 0) {
    OCTET_ASSIGN_OR_RETURN(nk_qp, QParams::Create(qp.scheme(), qp.dtype(), qp.quant_min(), qp.quant_max(),
                                                  qp.scales(), qp.zero_points(), 0));
  }
  return QTensor::Create(std::move(nk), std::move(nk_qp));
}

// Shared by QGemm and QMatMul once the weight layout is known: packs, plans and builds the kernel.
Result<PreparedOp> PrepareLinear(const OpPrepareArgs& args, const char* op, int channel_axis, size_t bias_slot) {
  OCTET_ASSIGN_OR_RETURN(const QParams* x_qp, ActivationInputQParams(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QParams* w_qp, ConstantWeightQParams(args, 1));
  OCTET_ASSIGN_OR_RETURN(const QParams* y_qp, ActivationOutputQParams(args));
  const Shape& x = args.inputs[0].shape;
  const Shape& w = args.inputs[1].shape;
  if (w.rank() != 2) return InvalidArgument("input {} (W) must have rank 2, got {}", InputName(args, 1), w);
  const int64_t n = w.dim(channel_axis), k = w.dim(1 - channel_axis);
  if (x.rank() < 1 || x.dim(x.rank() - 1) != k) {
    return InvalidArgument("input {} (X) {} must end in K = {} (W {})", InputName(args, 0), x, k, w);
  }
  std::vector<int64_t> out_dims = x.dims();
  out_dims.back() = n;
  OCTET_RETURN_IF_ERROR(float_ops::CheckOutputElements(args, out_dims));
  OCTET_ASSIGN_OR_RETURN(const QTensor nk, WeightsNK(args, *w_qp, channel_axis));
  OCTET_ASSIGN_OR_RETURN(const QGemmOutput output, ReadLinearOutput(args, *x_qp, *w_qp, n, bias_slot, *y_qp));
  QGemmPrepackOptions options;
  options.activation_dtype = x_qp->dtype();
  options.activation_zero_point = x_qp->zero_point();
  OCTET_ASSIGN_OR_RETURN(const PackedWeights packed, PackedWeights::Prepack(args.context, nk, options));
  OCTET_ASSIGN_OR_RETURN(QGemmPlan plan, QGemmPlan::Create(packed, *x_qp, output));
  const int64_t m = x.Product(0, x.rank() - 1);
  const std::string name = fmt::format("{}_{}s8_{}/{}", op, x_qp->dtype(), reference::QGemmStageName(output.stage),
                                       plan.UkernelName(args.context, m));
  auto kernel = MakeKernel([plan = std::move(plan), m, n, k](const OpRunArgs& r) -> Status {
    return plan.RunRows(r.context, r.inputs[0].raw_data(), static_cast<size_t>(k), m, r.outputs[0].raw_data(),
                        static_cast<size_t>(n));
  });
  return MakePrepared({{y_qp->dtype(), Shape(out_dims)}}, std::move(kernel), name);
}

Result<PreparedOp> PrepareQGemm(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(const int64_t trans_a, at.GetInt("transA", 0));
  OCTET_ASSIGN_OR_RETURN(const int64_t trans_b, at.GetInt("transB", 0));
  OCTET_ASSIGN_OR_RETURN(const float alpha, at.GetFloat("alpha", 1.0f));
  OCTET_ASSIGN_OR_RETURN(const float beta, at.GetFloat("beta", 1.0f));
  if (trans_a != 0) return InvalidArgument("attribute 'transA' must be 0, got {}", trans_a);
  if (trans_b != 0 && trans_b != 1) return InvalidArgument("attribute 'transB' must be 0 or 1, got {}", trans_b);
  if (alpha != 1.0f || beta != 1.0f) {
    return InvalidArgument("attributes 'alpha' and 'beta' must be 1 (fold them into the qparams), got {} and {}",
                           alpha, beta);
  }
  if (args.inputs[0].shape.rank() != 2) {
    return InvalidArgument("input {} (X) must be [M, K], got {}", InputName(args, 0), args.inputs[0].shape);
  }
  return PrepareLinear(args, "qgemm", trans_b == 1 ? 0 : 1, 2);
}

Result<PreparedOp> PrepareQMatMul(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  return PrepareLinear(args, "qmatmul", 1, 2);
}

}  // namespace

Status RegisterQGemmOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQGemm, PrepareQGemm));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQMatMul, PrepareQMatMul));
  return OkStatus();
}

}  // namespace octet::int8_ops
