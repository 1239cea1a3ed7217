// QBatchMatMul (see qbatchmatmul_op.h).
#include "ops/int8/qbatchmatmul_op.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ops/float/op_util.h"
#include "ops/int8/int8_ops.h"
#include "ops/int8/linear_output.h"
#include "ops/qgemm.h"
#include "ops/reference/qbatchmatmul_reference.h"
#include "ops/reference/qgemm_reference.h"
#include "ops/ukernels/qbmm_pack.h"

namespace octet::int8_ops {
namespace {

// Whether every code of B lies in [lo, hi] (a plain min/max loop, which the compiler vectorizes).
bool CodesWithin(DType dtype, const uint8_t* b, int64_t count, int32_t lo, int32_t hi) {
  int32_t b_min = 255, b_max = -128;
  if (dtype == DType::kU8) {
    uint8_t mn = 255, mx = 0;
    for (int64_t i = 0; i < count; ++i) {
      mn = b[i] < mn ? b[i] : mn;
      mx = b[i] > mx ? b[i] : mx;
    }
    b_min = mn;
    b_max = mx;
  } else {
    const auto* s = reinterpret_cast<const int8_t*>(b);
    int8_t mn = 127, mx = -128;
    for (int64_t i = 0; i < count; ++i) {
      mn = s[i] < mn ? s[i] : mn;
      mx = s[i] > mx ? s[i] : mx;
    }
    b_min = mn;
    b_max = mx;
  }
  return count == 0 || (b_min >= lo && b_max <= hi);
}

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
  QGemmPrepackOptions options;
  options.activation_dtype = a.dtype();
  options.activation_zero_point = a.zero_point();
  // The fast path's plan, made once: over weights spanning B's quant range once shifted (the kernel choice holds for
  // any B within that range), run on each batch's B packed per call by the qbmm_pack kernels.
  const int32_t b_qmin = static_cast<int32_t>(b_qp->quant_min()), b_qmax = static_cast<int32_t>(b_qp->quant_max());
  QGemmPlan plan;
  bool have_plan = false;
  if (shape.n * shape.k >= 2) {
    OCTET_ASSIGN_OR_RETURN(Tensor range_w, Tensor::Create(DType::kS8, Shape{shape.n, shape.k}));
    std::fill_n(range_w.data<int8_t>(), shape.n * shape.k, int8_t{0});
    range_w.data<int8_t>()[0] = static_cast<int8_t>(std::clamp(b_qmin - shift, -128, 127));
    range_w.data<int8_t>()[1] = static_cast<int8_t>(std::clamp(b_qmax - shift, -128, 127));
    OCTET_ASSIGN_OR_RETURN(QTensor qw, QTensor::Create(range_w, w_qp));
    OCTET_ASSIGN_OR_RETURN(const PackedWeights packed, PackedWeights::Prepack(args.context, qw, options));
    if (packed.alt_layout().nr == 0) {
      OCTET_ASSIGN_OR_RETURN(plan, QGemmPlan::Create(packed, a, output));
      have_plan = true;
    }
  }
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const int64_t m = shape.m, k = shape.k, n = shape.n;
    const auto* pa = static_cast<const uint8_t*>(r.inputs[0].raw_data());
    const auto* pb = static_cast<const uint8_t*>(r.inputs[1].raw_data());
    auto* py = static_cast<uint8_t*>(r.outputs[0].raw_data());
    const bool fast = have_plan && CodesWithin(b_dtype, pb, r.inputs[1].NumElements(), b_qmin, b_qmax);
    if (fast) {
      const QGemmLayout& layout = plan.weights().layout();
      const QBmmPackUkernelEntry& pack = SelectQBmmPackUkernel(r.context, layout);
      OCTET_ASSIGN_OR_RETURN(Tensor packed,
                             Tensor::Create(DType::kS8, Shape{static_cast<int64_t>(layout.PackedBytes(n, k))}));
      std::vector<int32_t> col_sums(layout.PaddedN(static_cast<size_t>(n)));
      for (size_t batch = 0; batch < shape.a_offsets.size(); ++batch) {
        pack.fn(layout, pb + shape.b_offsets[batch], static_cast<size_t>(n), static_cast<size_t>(k),
                static_cast<size_t>(n), static_cast<uint8_t>(shift), packed.data<int8_t>(), col_sums.data());
        OCTET_RETURN_IF_ERROR(plan.RunRowsPacked(r.context, packed.data<int8_t>(), col_sums.data(),
                                                 pa + shape.a_offsets[batch], static_cast<size_t>(k), m,
                                                 py + static_cast<int64_t>(batch) * m * n, static_cast<size_t>(n)));
      }
      return OkStatus();
    }
    // Codes outside B's quant range (no producer writes them; the reference clamps their shifted values), or weights
    // packed twice (AVX2 without VNNI, full-range B): prepack each batch's B.
    OCTET_ASSIGN_OR_RETURN(Tensor w, Tensor::Create(DType::kS8, Shape{n, k}));
    for (size_t batch = 0; batch < shape.a_offsets.size(); ++batch) {
      reference::BatchMatMulWeights(b_dtype, pb + shape.b_offsets[batch], k, n, shift, w.data<int8_t>());
      OCTET_ASSIGN_OR_RETURN(QTensor qw, QTensor::Create(w, w_qp));
      OCTET_ASSIGN_OR_RETURN(const PackedWeights packed, PackedWeights::Prepack(r.context, qw, options));
      OCTET_ASSIGN_OR_RETURN(const QGemmPlan batch_plan, QGemmPlan::Create(packed, a, output));
      OCTET_RETURN_IF_ERROR(batch_plan.RunRows(r.context, pa + shape.a_offsets[batch], static_cast<size_t>(k), m,
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
