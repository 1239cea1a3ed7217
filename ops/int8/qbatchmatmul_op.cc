// QBatchMatMul (see qbatchmatmul_op.h).
#include "ops/int8/qbatchmatmul_op.h"

#include <string>
#include <vector>

#include "ops/float/op_util.h"
#include "ops/int8/int8_ops.h"
#include "ops/int8/linear_output.h"
#include "ops/qgemm.h"
#include "ops/reference/qbatchmatmul_reference.h"
#include "ops/reference/qgemm_reference.h"

namespace octet::int8_ops {
namespace {

Result<PreparedOp> PrepareQBatchMatMul(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 2, 2));
  OCTET_ASSIGN_OR_RETURN(const QParams* a_qp, ActivationInputQParams(args, 0, "A"));
  OCTET_ASSIGN_OR_RETURN(const QParams* b_qp, ActivationInputQParams(args, 1, "B"));
  OCTET_ASSIGN_OR_RETURN(const QParams* y_qp, ActivationOutputQParams(args));
  OCTET_ASSIGN_OR_RETURN(const reference::BatchMatMulShape shape,
                         reference::MakeBatchMatMulShape(args.inputs[0].shape, args.inputs[1].shape));
  OCTET_RETURN_IF_ERROR(float_ops::CheckOutputElements(args, shape.output.dims()));
  // B's codes shifted into s8 (ops/reference/qbatchmatmul_reference.h); the int32 bound for the worst operands.
  const int32_t shift = reference::BatchMatMulWeightShift(b_qp->dtype(), b_qp->quant_min(), b_qp->quant_max());
  const int32_t w_zp = b_qp->zero_point() - shift;
  const int64_t max_k =
      reference::QGemmMaxK(a_qp->dtype() == DType::kU8 ? 0 : -128, a_qp->dtype() == DType::kU8 ? 255 : 127,
                           a_qp->zero_point(), -128, 127, w_zp);
  if (shape.k > max_k) {
    return InvalidArgument("K = {} could take an int32 accumulator out of range with these zero points (at most {})",
                           shape.k, max_k);
  }
  const QGemmOutput output =
      QGemmOutput::Requantized(QGemmStage::kFp32, y_qp->dtype(), y_qp->scale(), y_qp->zero_point());
  OCTET_ASSIGN_OR_RETURN(const QParams w_qp, QParams::PerTensor(DType::kS8, b_qp->scale(), w_zp));
  const QParams a = *a_qp;
  const DType b_dtype = b_qp->dtype();
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const int64_t m = shape.m, k = shape.k, n = shape.n;
    OCTET_ASSIGN_OR_RETURN(Tensor w, Tensor::Create(DType::kS8, Shape{n, k}));
    QGemmPrepackOptions options;
    options.activation_dtype = a.dtype();
    options.activation_zero_point = a.zero_point();
    const auto* pa = static_cast<const uint8_t*>(r.inputs[0].raw_data());
    const auto* pb = static_cast<const uint8_t*>(r.inputs[1].raw_data());
    auto* py = static_cast<uint8_t*>(r.outputs[0].raw_data());
    for (size_t batch = 0; batch < shape.a_offsets.size(); ++batch) {
      reference::BatchMatMulWeights(b_dtype, pb + shape.b_offsets[batch], k, n, shift, w.data<int8_t>());
      OCTET_ASSIGN_OR_RETURN(QTensor qw, QTensor::Create(w, w_qp));
      OCTET_ASSIGN_OR_RETURN(const PackedWeights packed, PackedWeights::Prepack(r.context, qw, options));
      OCTET_ASSIGN_OR_RETURN(const QGemmPlan plan, QGemmPlan::Create(packed, a, output));
      OCTET_RETURN_IF_ERROR(plan.RunRows(r.context, pa + shape.a_offsets[batch], static_cast<size_t>(k), m,
                                         py + static_cast<int64_t>(batch) * m * n, static_cast<size_t>(n)));
    }
    return OkStatus();
  });
  return float_ops::MakePrepared(
      {{y_qp->dtype(), shape.output}}, std::move(kernel),
      fmt::format("qbatchmatmul_{}{}_fp32", DTypeName(a_qp->dtype()), DTypeName(b_qp->dtype())));
}

}  // namespace

Status RegisterQBatchMatMulOp(OpRegistry& registry) {
  return RegisterInt8Op(registry, Int8Op::kQBatchMatMul, PrepareQBatchMatMul);
}

}  // namespace octet::int8_ops
