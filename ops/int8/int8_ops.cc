// The int8 operator registry: one call per operator group (each group's file registers its operators).
#include "ops/int8/int8_ops.h"

#include "ops/int8/dynamic_gemm_op.h"
#include "ops/int8/dynamic_rnn_op.h"
#include "ops/int8/qbatchmatmul_op.h"
#include "ops/int8/qconcat_op.h"
#include "ops/int8/qconv_op.h"
#include "ops/int8/qelementwise_ops.h"
#include "ops/int8/qgemm_op.h"
#include "ops/int8/qpool_ops.h"
#include "ops/int8/qrow_ops.h"
#include "ops/int8/quantize_ops.h"
#include "ops/int8/qunary_ops.h"

namespace octet {

Status RegisterInt8Ops(OpRegistry& registry) {
  for (Status (*reg)(OpRegistry&) : std::initializer_list<Status (*)(OpRegistry&)>{
           int8_ops::RegisterQuantizeOps,
           int8_ops::RegisterQConvOps,
           int8_ops::RegisterQGemmOps,
           int8_ops::RegisterQElementwiseOps,
           int8_ops::RegisterQPoolOps,
           int8_ops::RegisterQConcatOp,
           int8_ops::RegisterQUnaryOps,
           int8_ops::RegisterQRowOps,
           int8_ops::RegisterQBatchMatMulOp,
           RegisterDynamicGemmOps,
           RegisterDynamicRnnOps,
       }) {
    OCTET_RETURN_IF_ERROR(reg(registry));
  }
  return OkStatus();
}

}  // namespace octet
