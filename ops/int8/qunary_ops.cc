// QLookup (a byte-to-byte table) and QClamp (integer bounds from real ones), both elementwise over contiguous data.
#include "ops/int8/qunary_ops.h"

#include <array>
#include <cmath>
#include <limits>
#include <memory>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/int8/activation_qparams.h"
#include "ops/int8/int8_ops.h"
#include "ops/reference/fused_activation_reference.h"
#include "ops/reference/qlookup_reference.h"
#include "ops/reference/quantize_reference.h"
#include "ops/ukernels/lut.h"

namespace octet::int8_ops {
namespace {

constexpr int64_t kUnaryTileElements = int64_t{1} << 16;

Result<PreparedOp> PrepareQLookup(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(const QActivation qx, ReadInputActivation(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QActivation qy, ReadOutputActivation(args, 0, "Y"));
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(const std::string name, at.GetString("function"));
  OCTET_ASSIGN_OR_RETURN(const std::string approximate, at.GetString("approximate", "none"));
  OCTET_ASSIGN_OR_RETURN(const reference::LookupFunction function, reference::ParseLookupFunction(name, approximate));
  const float default_alpha = function == reference::LookupFunction::kLeakyRelu ? 0.01f : 0.2f;
  OCTET_ASSIGN_OR_RETURN(const float alpha, at.GetFloat("alpha", default_alpha));
  OCTET_ASSIGN_OR_RETURN(const float beta, at.GetFloat("beta", 0.5f));
  if (!std::isfinite(alpha) || !std::isfinite(beta)) {
    return InvalidArgument("attributes alpha and beta must be finite, got {} and {}", alpha, beta);
  }
  reference::QLookupParams p;
  p.function = function;
  p.alpha = alpha;
  p.beta = beta;
  p.x_dtype = qx.dtype;
  p.x_scale = qx.scale;
  p.x_zp = qx.zero_point;
  p.y_scale = qy.scale;
  p.y_zp = qy.zero_point;
  p.y_quant_min = qy.quant_min;
  p.y_quant_max = qy.quant_max;
  const std::array<int32_t, 256> codes = reference::BuildLookupTable(p);
  auto table = std::make_shared<std::array<uint8_t, 256>>();
  for (size_t i = 0; i < 256; ++i) (*table)[i] = static_cast<uint8_t>(codes[i]);
  const UkernelEntry<LutUkernelFn>& lut = SelectUkernel(args.context, LutUkernels());
  auto kernel = MakeKernel([table, fn = lut.fn](const OpRunArgs& r) -> Status {
    const auto* x = static_cast<const uint8_t*>(r.inputs[0].raw_data());
    auto* y = static_cast<uint8_t*>(r.outputs[0].raw_data());
    const uint8_t* t = table->data();
    ParallelFor(r.context, r.outputs[0].NumElements(), kUnaryTileElements,
                [&](int64_t begin, int64_t end) { fn(t, x + begin, static_cast<size_t>(end - begin), y + begin); });
    return OkStatus();
  });
  return float_ops::MakePrepared({{qy.dtype, args.inputs[0].shape}}, std::move(kernel),
                                 fmt::format("qlookup_{}_{}_{}/{}", reference::LookupFunctionName(function),
                                             DTypeName(qx.dtype), DTypeName(qy.dtype), lut.name));
}

template <typename T>
void RunClamp(const OpRunArgs& r, int32_t lo_code, int32_t hi_code) {
  const T* x = r.inputs[0].data<T>();
  T* y = r.outputs[0].data<T>();
  const T lo = static_cast<T>(lo_code), hi = static_cast<T>(hi_code);
  ParallelFor(r.context, r.outputs[0].NumElements(), kUnaryTileElements, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T v = x[i] < lo ? lo : x[i];
      y[i] = v > hi ? hi : v;
    }
  });
}

Result<PreparedOp> PrepareQClamp(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(const QActivation qx, ReadInputActivation(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QActivation qy, ReadOutputActivation(args, 0, "Y"));
  OCTET_RETURN_IF_ERROR(CheckSharedQParams(qx, qy, Int8OpName(Int8Op::kQClamp)));
  constexpr float kInf = std::numeric_limits<float>::infinity();
  OCTET_ASSIGN_OR_RETURN(const float min, args.node.attributes.GetFloat("min", -kInf));
  OCTET_ASSIGN_OR_RETURN(const float max, args.node.attributes.GetFloat("max", kInf));
  if (std::isnan(min) || std::isnan(max) || min > max) {
    return InvalidArgument("attributes min and max must be ordered real values, got min {} and max {}", min, max);
  }
  const int32_t lo = reference::ClampBoundCode(min, qx.scale, qx.zero_point, qx.quant_min, qx.quant_max);
  const int32_t hi = reference::ClampBoundCode(max, qx.scale, qx.zero_point, qx.quant_min, qx.quant_max);
  std::unique_ptr<OpKernel> kernel;
  if (qx.dtype == DType::kU8) {
    kernel = MakeKernel([lo, hi](const OpRunArgs& r) -> Status {
      RunClamp<uint8_t>(r, lo, hi);
      return OkStatus();
    });
  } else {
    kernel = MakeKernel([lo, hi](const OpRunArgs& r) -> Status {
      RunClamp<int8_t>(r, lo, hi);
      return OkStatus();
    });
  }
  return float_ops::MakePrepared({{qx.dtype, args.inputs[0].shape}}, std::move(kernel),
                                 fmt::format("qclamp_{}", DTypeName(qx.dtype)));
}

}  // namespace

Status RegisterQUnaryOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQLookup, PrepareQLookup));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQClamp, PrepareQClamp));
  return OkStatus();
}

}  // namespace octet::int8_ops
