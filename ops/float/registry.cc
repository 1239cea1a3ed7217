// The float operator registry: one call per operator group.
#include "ops/float/registry.h"

#include "ops/float/axis_scan.h"
#include "ops/float/binary.h"
#include "ops/float/binary_math.h"
#include "ops/float/compare.h"
#include "ops/float/concat.h"
#include "ops/float/constant.h"
#include "ops/float/control_flow.h"
#include "ops/float/conv.h"
#include "ops/float/depth_space.h"
#include "ops/float/einsum.h"
#include "ops/float/expand.h"
#include "ops/float/gather.h"
#include "ops/float/gather_scatter.h"
#include "ops/float/gemm.h"
#include "ops/float/instance_norm.h"
#include "ops/float/integer_linear.h"
#include "ops/float/normalization.h"
#include "ops/float/pad.h"
#include "ops/float/pool.h"
#include "ops/float/quantize_linear.h"
#include "ops/float/range.h"
#include "ops/float/reduce.h"
#include "ops/float/reshape.h"
#include "ops/float/resize.h"
#include "ops/float/rnn.h"
#include "ops/float/slice.h"
#include "ops/float/softmax.h"
#include "ops/float/transpose.h"
#include "ops/float/trilu.h"
#include "ops/float/unary.h"
#include "ops/float/variadic.h"

namespace octet {

Status RegisterFloatOps(OpRegistry& registry) {
  using namespace float_ops;  // NOLINT
  for (Status (*reg)(OpRegistry&) :
       {RegisterBinaryOps, RegisterConcatOps, RegisterConstantOps, RegisterConvOps, RegisterGatherOps, RegisterGemmOps,
        RegisterNormalizationOps, RegisterPadOps, RegisterPoolOps, RegisterReduceOps, RegisterReshapeOps,
        RegisterRnnOps, RegisterSliceOps, RegisterSoftmaxOps, RegisterTransposeOps, RegisterUnaryOps,
        // Ops for models users bring (issue 22).
        RegisterBinaryMathOps, RegisterCompareOps, RegisterExpandOps, RegisterRangeOps, RegisterResizeOps,
        RegisterVariadicOps, RegisterAxisScanOps, RegisterGatherScatterOps, RegisterDepthSpaceOps,
        RegisterInstanceNormOps, RegisterControlFlowOps, RegisterEinsumOps, RegisterTriluOps,
        // ONNX's quantized operators with run-time qparams (issue 23).
        RegisterQuantizeLinearOps, RegisterIntegerLinearOps}) {
    OCTET_RETURN_IF_ERROR(reg(registry));
  }
  return OkStatus();
}

OpRegistry FloatOpRegistry() {
  OpRegistry registry;
  const Status status = RegisterFloatOps(registry);
  OCTET_CHECK(status.ok());  // the float operators have distinct names: a failure here is a bug in octet
  return registry;
}

}  // namespace octet
