// Test helpers for the int8 operators of quantized graphs: one node in domain "octet" built by hand with qparams on
// its values, compiled with QuantizedGraphRegistry() and run; random quantized data; the output stage computed from
// the spec's functions only (reference::QGemmApplyStage and the multiplier derivations of qgemm_reference.h).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/tensor.h"
#include "ops/qgemm.h"
#include "ops/reference/qgemm_reference.h"
#include "tests/ops/stage_arrays.h"
#include "ops/quantize.h"
#include "quant/quantized_registry.h"
#include "tests/ops/float/float_op_tester.h"

namespace octet::testing {

struct QInput {
  Tensor tensor;
  std::optional<QParams> qparams;
  bool constant = false;
  bool absent = false;
};
inline QInput QIn(Tensor t, std::optional<QParams> qp) { return QInput{std::move(t), std::move(qp), false, false}; }
inline QInput QConst(Tensor t, std::optional<QParams> qp) { return QInput{std::move(t), std::move(qp), true, false}; }
inline QInput QAbsent() { return QInput{Tensor(), std::nullopt, false, true}; }

struct Int8OpSpec {
  std::string op_type;
  std::vector<QInput> inputs;
  AttributeMap attributes;
  std::optional<QParams> output_qparams;
  int threads = 1;
  bool fold_constants = true;
};

inline const OpRegistry& Int8Registry() {
  static const OpRegistry registry = QuantizedGraphRegistry();
  return registry;
}

// Inputs are named "x", "w", "b" by slot (then "in3", ...), the node "op" and its output "y".
inline std::string SlotName(size_t slot) {
  static const char* const kNames[] = {"x", "w", "b"};
  return slot < 3 ? kNames[slot] : fmt::format("in{}", slot);
}

struct CompiledOp {
  Executor executor;
  std::vector<Tensor> feeds;
};

inline Result<CompiledOp> CompileInt8Op(const Int8OpSpec& spec) {
  Graph g("test");
  Node node;
  node.name = "op";
  node.op_type = spec.op_type;
  node.domain = "octet";
  node.attributes = spec.attributes;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const QInput& in = spec.inputs[i];
    if (in.absent) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    ValueId id = kNoValue;
    if (in.constant) {
      OCTET_ASSIGN_OR_RETURN(id, g.AddConstant(SlotName(i), in.tensor));
    } else {
      OCTET_ASSIGN_OR_RETURN(id, g.AddInput(SlotName(i), in.tensor.dtype(), in.tensor.shape()));
      feeds.push_back(in.tensor);
    }
    g.mutable_value(id).qparams = in.qparams;
    node.inputs.push_back(id);
  }
  const DType out_dtype = spec.output_qparams ? spec.output_qparams->dtype() : DType::kF32;
  OCTET_ASSIGN_OR_RETURN(ValueId y, g.AddNodeValue("y", out_dtype));
  g.mutable_value(y).qparams = spec.output_qparams;
  node.outputs.push_back(y);
  OCTET_RETURN_IF_ERROR(g.AddOutput(y));
  OCTET_RETURN_IF_ERROR(g.AddNode(std::move(node)).status());
  // The context lives as long as the executor needs it: one per thread count, for the whole test binary.
  static const Context contexts[] = {Context::ForIsas(DetectedIsas(), 1), Context::ForIsas(DetectedIsas(), 2),
                                     Context::ForIsas(DetectedIsas(), 3)};
  const Context& context = contexts[std::clamp(spec.threads, 1, 3) - 1];
  CompileOptions options;
  options.fold_constants = spec.fold_constants;
  OCTET_ASSIGN_OR_RETURN(Executor exec, Executor::Compile(g, context, Int8Registry(), options));
  return CompiledOp{std::move(exec), std::move(feeds)};
}

inline Result<Tensor> RunInt8Op(const Int8OpSpec& spec) {
  OCTET_ASSIGN_OR_RETURN(CompiledOp op, CompileInt8Op(spec));
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outs, op.executor.Run(op.feeds));
  return outs.front();
}

// Random bytes (u8 or s8 values).
inline Tensor RandomBytes(std::mt19937_64& rng, DType dtype, const Shape& shape) {
  Tensor t = Tensor::Create(dtype, shape).value();
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.SizeBytes(); ++i) p[i] = static_cast<uint8_t>(rng());
  return t;
}

// Per-tensor qparams over the dtype's full range.
inline QParams PerTensorQ(DType dtype, float scale, int32_t zp) { return QParams::PerTensor(dtype, scale, zp).value(); }

// s8 weight qparams: per tensor, or per channel on `axis` with `channels` scales; symmetric unless `affine`.
inline QParams WeightQParams(std::mt19937_64& rng, bool per_channel, int64_t channels, int axis, bool affine) {
  std::vector<float> scales;
  std::vector<int32_t> zps;
  for (int64_t j = 0; j < (per_channel ? channels : 1); ++j) {
    scales.push_back(0.003f + 0.0005f * static_cast<float>(rng() % 9));
    zps.push_back(affine ? static_cast<int32_t>(rng() % 21) - 10 : 0);
  }
  if (!per_channel) return QParams::PerTensor(DType::kS8, scales[0], zps[0], -128, 127).value();
  return QParams::PerChannel(DType::kS8, scales, zps, axis, -128, 127).value();
}

// y qparams whose range covers a few standard deviations of the real outputs of a K-term dot product of random
// bytes (so the test sees values across the range, not a saturated wall).
inline QParams OutputQParams(DType dtype, float x_scale, float w_scale, int64_t k) {
  const float spread = x_scale * w_scale * 74.0f * 74.0f * std::sqrt(static_cast<float>(std::max<int64_t>(k, 1)));
  return PerTensorQ(dtype, spread / 40.0f, dtype == DType::kU8 ? 118 : -7);
}

// The output stage of a linear int8 operator per the spec: acc [m][n] -> bytes (u8/s8), given the activation scale,
// the weight qparams (per channel along the output channels), the output qparams, a fused Relu and the bias as the
// operator receives it (s32 in accumulator units, or f32 real values: added in float by fbgemm, quantized with
// reference::QuantizeBias by fp32 and q31).
inline std::vector<uint8_t> ReferenceStage(const std::vector<int32_t>& acc, int64_t m, int64_t n, QGemmStage stage,
                                           float a_scale, const QParams& w_qp, const QParams& y_qp, bool relu,
                                           const std::vector<int32_t>& bias_s32, const std::vector<float>& bias_f32) {
  const size_t nn = static_cast<size_t>(n);
  StageArrays st(nn);
  for (size_t j = 0; j < nn; ++j) {
    st.w_scales[j] = w_qp.scales()[w_qp.per_channel() ? j : 0];
    st.multipliers[j] = reference::QGemmFp32Multiplier(a_scale, st.w_scales[j], y_qp.scale());
    reference::QGemmQ31Multiplier(a_scale, st.w_scales[j], y_qp.scale(), &st.q31_m[j], &st.q31_s[j]);
    if (!bias_s32.empty()) st.bias_s32[j] = bias_s32[j];
    if (!bias_f32.empty()) st.bias_s32[j] = reference::QuantizeBias(bias_f32[j], a_scale, st.w_scales[j]);
    if (stage == QGemmStage::kFbgemm) {
      reference::QGemmFbgemmParams(a_scale, st.w_scales[j], y_qp.scale(), bias_f32.empty() ? 0.0f : bias_f32[j],
                                   &st.multipliers[j], &st.bias_f32[j]);
    }
  }
  reference::QGemmStageParams p = st.Params(stage, a_scale);
  p.signed_output = y_qp.dtype() == DType::kS8;
  p.zero_point = y_qp.zero_point();
  p.lo = relu ? std::max(y_qp.zero_point(), y_qp.quant_min()) : y_qp.quant_min();
  p.hi = y_qp.quant_max();
  std::vector<uint8_t> y(static_cast<size_t>(m) * nn);
  reference::QGemmApplyStage(static_cast<size_t>(m), nn, acc.data(), nn, p, y.data(), nn);
  return y;
}

// Bytes of an 8-bit tensor.
inline std::vector<uint8_t> Bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.SizeBytes());
}

// Index of the first differing byte, or -1.
inline int64_t FirstDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

// Guards against vacuous comparisons: several distinct values, and at most half of them at the clamp bounds.
inline bool Varied(const std::vector<uint8_t>& y, uint8_t lo_byte, uint8_t hi_byte) {
  if (y.empty()) return false;
  size_t distinct = 0, at_bounds = 0;
  bool seen[256] = {};
  for (uint8_t v : y) {
    if (!seen[v]) ++distinct;
    seen[v] = true;
    if (v == lo_byte || v == hi_byte) ++at_bounds;
  }
  return distinct >= std::min<size_t>(4, y.size()) && at_bounds * 2 <= y.size();
}

// The error message of a failed Result, or "" when it succeeded.
template <typename T>
std::string ErrorOf(const Result<T>& r) {
  return r.ok() ? std::string() : r.status().message();
}

// A random bias of a linear int8 operator (QConv, QGemm) with `n` output channels, and its values for the reference.
struct RandomBias {
  QInput input = QAbsent();  // absent for mode 0
  std::vector<int32_t> s32;
  std::vector<float> f32;
};

// Mode 0: no bias; mode 2 (and mode 1 under fbgemm, whose bias is float): f32 real values in (-1, 1) * 100 `f32_step`;
// mode 1: s32 in accumulator units with per-channel qparams x_scale * w_scale.
inline RandomBias MakeRandomBias(std::mt19937_64& rng, int mode, QGemmStage stage, int64_t n, const QParams& x_qp,
                                 const QParams& w_qp, float f32_step) {
  RandomBias b;
  if (mode == 2 || (mode == 1 && stage == QGemmStage::kFbgemm)) {
    for (int64_t j = 0; j < n; ++j) b.f32.push_back(static_cast<float>(static_cast<int>(rng() % 201) - 100) * f32_step);
    b.input = QConst(Tensor::FromValues<float>(Shape{n}, b.f32).value(), std::nullopt);
  } else if (mode == 1) {
    std::vector<float> scales;
    for (int64_t j = 0; j < n; ++j) {
      b.s32.push_back(static_cast<int32_t>(rng() % 8001) - 4000);
      scales.push_back(x_qp.scale() * w_qp.scales()[w_qp.per_channel() ? j : 0]);
    }
    const QParams b_qp = QParams::PerChannel(DType::kS32, scales, std::vector<int32_t>(scales.size(), 0), 0,
                                             std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max())
                             .value();
    b.input = QConst(Tensor::FromValues<int32_t>(Shape{n}, b.s32).value(), b_qp);
  }
  return b;
}

// A valid linear int8 node (QConv, QGemm) for the error tests, which change one thing each: u8 x of `x_shape` (scale
// 0.02, zero point 128), constant s8 weights of `w_shape` quantized per channel along axis 0, `attributes`, output
// qparams `y_qp`; the data drawn from `seed`.
inline Int8OpSpec ValidLinearSpec(const std::string& op_type, const Shape& x_shape, const Shape& w_shape,
                                  AttributeMap attributes, QParams y_qp, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Int8OpSpec spec;
  spec.op_type = op_type;
  const QParams w_qp = WeightQParams(rng, true, w_shape.dim(0), 0, false);
  spec.inputs = {QIn(RandomBytes(rng, DType::kU8, x_shape), PerTensorQ(DType::kU8, 0.02f, 128)),
                 QConst(RandomBytes(rng, DType::kS8, w_shape), w_qp)};
  spec.attributes = std::move(attributes);
  spec.output_qparams = std::move(y_qp);
  return spec;
}

// Compiling `spec` fails, with a message containing every one of `parts` (the node, the value, what is wrong).
inline void ExpectCompileError(const Int8OpSpec& spec, const std::vector<std::string>& parts) {
  auto r = CompileInt8Op(spec);
  REQUIRE_FALSE(r.ok());
  const std::string& msg = r.status().message();
  INFO(msg);
  for (const std::string& p : parts) CHECK(msg.find(p) != std::string::npos);
}

// Compiling `valid` (a spec with inputs x and w) with the qparams of x, of w or of y removed fails naming that value
// and `node` ("failed to compile node 'op' (QConv)").
inline void ExpectMissingQParamsErrors(const Int8OpSpec& valid, const std::string& node) {
  for (size_t input : {0, 1}) {
    Int8OpSpec s = valid;
    s.inputs[input].qparams.reset();
    ExpectCompileError(s, {node, input == 0 ? "'x'" : "'w'", "qparams"});
  }
  Int8OpSpec s = valid;
  s.output_qparams.reset();
  ExpectCompileError(s, {node, "'y'", "qparams"});
}

// Compiling `valid` (weights w at input 1, of shape `w_shape`) with non-constant weights, or with u8 weights, fails
// naming the node and 'w': a linear int8 operator's weights are constant s8.
inline void ExpectConstantS8WeightErrors(const Int8OpSpec& valid, const std::string& node, std::mt19937_64& rng,
                                         const Shape& w_shape) {
  Int8OpSpec s = valid;
  s.inputs[1].constant = false;
  ExpectCompileError(s, {node, "'w'", "constant"});
  s = valid;
  s.inputs[1] = QConst(RandomBytes(rng, DType::kU8, w_shape), PerTensorQ(DType::kU8, 0.01f, 128));
  ExpectCompileError(s, {node, "'w'", "must be s8"});
}

// `spec` (x, constant w and a float bias b, each with qparams but b) run as the int8 operator stays within one
// output step of `float_op` (with `float_attributes`) run on the dequantized x and w and on b, the float result
// quantized to the spec's output qparams: the int8 path rounds the bias to accumulator units and requantizes with a
// float32 multiplier, the float path sums in another order. More than half of those quantized values must lie inside
// the clamp range, else the comparison proves little.
inline void ExpectOneStepFromFloat(const Int8OpSpec& spec, const std::string& float_op,
                                   const AttributeMap& float_attributes) {
  auto y = RunInt8Op(spec);
  REQUIRE(ErrorOf(y) == "");
  const Context context = Context::ForIsas(DetectedIsas());
  const auto dequantized = [&](const QInput& in) {
    return Dequantize(context, QTensor::Create(in.tensor, *in.qparams).value()).value();
  };
  const Tensor xf = dequantized(spec.inputs[0]), wf = dequantized(spec.inputs[1]);
  auto yf = RunFloatOp(float_op, {In(xf), Const(wf), Const(spec.inputs[2].tensor)}, float_attributes);
  REQUIRE(ErrorOf(yf) == "");
  const float* f = yf->front().data<float>();
  const QParams& y_qp = *spec.output_qparams;
  const float lo = static_cast<float>(y_qp.quant_min()), hi = static_cast<float>(y_qp.quant_max());
  int64_t inside = 0;
  for (int64_t i = 0; i < y->NumElements(); ++i) {
    const int q = y->dtype() == DType::kS8 ? int{y->data<int8_t>()[i]} : int{y->data<uint8_t>()[i]};
    const float want = std::clamp(std::nearbyint(f[i] / y_qp.scale()) + static_cast<float>(y_qp.zero_point()), lo, hi);
    INFO("element " << i << ": float " << f[i] << " -> " << want << ", int8 " << q);
    REQUIRE(std::fabs(static_cast<float>(q) - want) <= 1.0f);
    if (want > lo && want < hi) ++inside;
  }
  CHECK(inside * 2 > y->NumElements());
}

}  // namespace octet::testing
