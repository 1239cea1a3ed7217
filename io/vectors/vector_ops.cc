// Per-operator rules of the test vectors: derived tensors and parameters, and the reference replay.
#include "io/vectors/vector_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/context.h"
#include "core/op_registry.h"
#include "core/op_table.h"
#include "ops/float/linear_qparams.h"
#include "ops/float/op_util.h"
#include "ops/float/pool.h"
#include "ops/reference/fused_activation_reference.h"
#include "ops/reference/qconcat_reference.h"
#include "ops/reference/qconv_op_reference.h"
#include "ops/reference/qelementwise_reference.h"
#include "ops/reference/qgemm_op_reference.h"
#include "ops/reference/qgemm_reference.h"
#include "ops/reference/qlookup_reference.h"
#include "ops/reference/qpool_reference.h"
#include "ops/reference/quantize_reference.h"
#include "ops/reference/requantize_reference.h"

namespace octet::vectors {
namespace {

using nlohmann::json;

bool IsShapeOnly(const std::string& domain, std::string_view op) {
  using F = FloatOp;
  return (domain.empty() || domain == "ai.onnx") &&
         (IsFloatOp(op, F::kReshape) || IsFloatOp(op, F::kFlatten) || IsFloatOp(op, F::kSqueeze) ||
          IsFloatOp(op, F::kUnsqueeze) || IsFloatOp(op, F::kIdentity));
}

bool IsTranspose(const std::string& domain, std::string_view op) {
  return (domain.empty() || domain == "ai.onnx") && IsFloatOp(op, FloatOp::kTranspose);
}

// ---- tensor access and comparison ----

Result<const VectorTensor*> Need(const NodeVectors& v, const std::string& role, int slot = 0) {
  const VectorTensor* t = v.Find(role, slot);
  if (t == nullptr) return InvalidArgument("node '{}' ({}): no {} {} recorded", v.name, v.op_type, role, slot);
  return t;
}

Result<const QParams*> NeedQParams(const NodeVectors& v, const VectorTensor& t) {
  if (!t.qparams) {
    return InvalidArgument("node '{}' ({}): {} {} ('{}') has no qparams", v.name, v.op_type, t.role, t.slot, t.value);
  }
  return &*t.qparams;
}

// Whether the integer codes of an activation are u8 or s8 with per-tensor qparams.
Status CheckActivation(const NodeVectors& v, const VectorTensor& t) {
  OCTET_ASSIGN_OR_RETURN(const QParams* qp, NeedQParams(v, t));
  if ((t.tensor.dtype() != DType::kU8 && t.tensor.dtype() != DType::kS8) || qp->dtype() != t.tensor.dtype() ||
      qp->per_channel()) {
    return InvalidArgument(
        "node '{}' ({}): {} {} must be u8 or s8 with per-tensor qparams of its dtype, got {} "
        "with {}",
        v.name, v.op_type, t.role, t.slot, t.tensor.dtype(), qp->ToString());
  }
  return OkStatus();
}

int32_t CodeAt(const Tensor& t, int64_t i) {
  OCTET_CHECK(t.dtype() != DType::kF32);
  return float_ops::IntAt(ConstTensorView(t), i);
}

void SetCode(Tensor& t, int64_t i, int32_t code) {
  switch (t.dtype()) {
    case DType::kU8: t.data<uint8_t>()[i] = static_cast<uint8_t>(code); return;
    case DType::kS8: t.data<int8_t>()[i] = static_cast<int8_t>(code); return;
    case DType::kS32: t.data<int32_t>()[i] = code; return;
    case DType::kF32: break;
  }
  OCTET_CHECK(false);
}

std::string ElementText(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kF32) {
    const float f = t.data<float>()[i];
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return fmt::format("{} (0x{:08x})", f, bits);
  }
  return fmt::format("{}", CodeAt(t, i));
}

std::string MultiIndex(const Shape& s, int64_t i) {
  std::vector<int64_t> idx(static_cast<size_t>(s.rank()));
  for (int d = s.rank() - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = s.dim(d) == 0 ? 0 : i % s.dim(d);
    i = s.dim(d) == 0 ? 0 : i / s.dim(d);
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

// recorded == computed element by element (floats bit for bit); the first difference names node, tensor, index.
Status Compare(const NodeVectors& v, const std::string& what, const Tensor& recorded, const Tensor& computed,
               int64_t* elements) {
  if (recorded.dtype() != computed.dtype() || recorded.shape() != computed.shape()) {
    return DataLoss("node '{}' ({}): {} is {} {} in the vectors, the reference gives {} {}", v.name, v.op_type, what,
                    recorded.dtype(), recorded.shape(), computed.dtype(), computed.shape());
  }
  const size_t size = DTypeSize(recorded.dtype());
  const auto* a = static_cast<const std::byte*>(recorded.raw_data());
  const auto* b = static_cast<const std::byte*>(computed.raw_data());
  for (int64_t i = 0; i < recorded.NumElements(); ++i) {
    if (std::memcmp(a + static_cast<size_t>(i) * size, b + static_cast<size_t>(i) * size, size) != 0) {
      return DataLoss(
          "node '{}' ({}): {} differs at element {} (index {}): expected {} (recorded), got {} "
          "(reference)",
          v.name, v.op_type, what, i, MultiIndex(recorded.shape(), i), ElementText(recorded, i),
          ElementText(computed, i));
    }
  }
  if (elements != nullptr) *elements += recorded.NumElements();
  return OkStatus();
}

// Input 0 and output 0, both u8 or s8 with per-tensor qparams.
Result<std::pair<const VectorTensor*, const VectorTensor*>> NeedActivations(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  OCTET_RETURN_IF_ERROR(CheckActivation(v, *x));
  OCTET_RETURN_IF_ERROR(CheckActivation(v, *y));
  return std::pair<const VectorTensor*, const VectorTensor*>{x, y};
}

template <typename T>
Tensor VectorTensorOf(Shape shape, const std::vector<T>& values) {
  return Tensor::FromValues<T>(std::move(shape), std::span<const T>(values)).value();
}

// ---- shared parameter rules ----

struct Bounds {
  int32_t lo, hi;
};

Result<Bounds> ActivationBounds(const NodeVectors& v, const QParams& y) {
  auto b = reference::FusedActivationBounds(v.attributes, y.scale(), y.zero_point(), y.quant_min(), y.quant_max());
  if (!b.ok()) return b.status().WithContext(fmt::format("node '{}'", v.name));
  return Bounds{b->lo, b->hi};
}

Result<reference::QGemmStage> Scheme(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const std::string s, v.attributes.GetString("requantization", "fp32"));
  if (s == "fp32") return reference::QGemmStage::kFp32;
  if (s == "q31") return reference::QGemmStage::kQ31;
  if (s == "fbgemm") return reference::QGemmStage::kFbgemm;
  return InvalidArgument("node '{}': attribute 'requantization' must be fp32, q31 or fbgemm, got \"{}\"", v.name, s);
}

// Elements of `shape` between consecutive entries of axis `axis`: index i is in channel (i / inner) % dim(axis).
int64_t Inner(const Shape& shape, int axis) { return shape.Product(axis + 1, shape.rank()); }

// ---- linear operators: QConv, QGemm, QMatMul ----

struct LinearShape {
  int64_t channels = 0;  // output channels (N, M)
  int channel_axis = 0;  // of the output
  int w_axis = 0;        // the weight's output-channel axis
};

Result<LinearShape> ReadLinearShape(const NodeVectors& v, const Tensor& x, const Tensor& w, const Tensor& y) {
  LinearShape s;
  const bool ranks_ok = IsInt8Op(v, Int8Op::kQConv)
                            ? (x.shape().rank() == 3 || x.shape().rank() == 4) &&
                                  w.shape().rank() == x.shape().rank() && y.shape().rank() == x.shape().rank()
                            : w.shape().rank() == 2 && x.shape().rank() >= (IsInt8Op(v, Int8Op::kQGemm) ? 2 : 1) &&
                                  y.shape().rank() == x.shape().rank();
  if (!ranks_ok) {
    return InvalidArgument("node '{}' ({}): input {}, weight {} and output {} have unsupported ranks", v.name,
                           v.op_type, x.shape(), w.shape(), y.shape());
  }
  if (IsInt8Op(v, Int8Op::kQConv)) {
    s.channels = w.shape().dim(0);
    s.channel_axis = 1;
  } else {
    OCTET_ASSIGN_OR_RETURN(const int64_t trans_b, v.attributes.GetInt("transB", 0));
    const bool rows = IsInt8Op(v, Int8Op::kQGemm) && trans_b == 1;  // w [N, K]
    s.w_axis = rows ? 0 : 1;
    s.channels = w.shape().dim(s.w_axis);
    s.channel_axis = y.shape().rank() - 1;
  }
  if (w.shape().rank() < 2 || x.shape().rank() < 1 || y.shape().rank() < 1 ||
      y.shape().dim(s.channel_axis) != s.channels) {
    return InvalidArgument("node '{}' ({}): weight {} and output {} disagree on the output channels", v.name, v.op_type,
                           w.shape(), y.shape());
  }
  return s;
}

// A QConv node's geometry: its attributes with the pads resolved, 1-D as height 1 (the op-level spec's form).
Result<reference::QConvOpGeometry> ConvGeometry(const NodeVectors& v, const Shape& x, const Shape& w) {
  if (x.rank() != 3 && x.rank() != 4) return InvalidArgument("node '{}': QConv input must be rank 3 or 4", v.name);
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  OCTET_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                         v.attributes.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations,
                         v.attributes.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, v.attributes.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(const std::string auto_pad, v.attributes.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(const int64_t group, v.attributes.GetInt("group", 1));
  if (strides.size() != nd || dilations.size() != nd) {
    return InvalidArgument("node '{}': QConv attributes 'strides' and 'dilations' must have {} values", v.name, nd);
  }
  const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(pads, float_ops::ResolvePads(auto_pad, std::move(pads), in, kernel, strides, dilations));
  return reference::MakeQConvOpGeometry(x, w, strides, dilations, pads, group);
}

json ConvGeometryJson(const reference::QConvOpGeometry& g) {
  return json{{"group", g.groups},
              {"kernel", {g.kh, g.kw}},
              {"strides", {g.stride_h, g.stride_w}},
              {"dilations", {g.dilation_h, g.dilation_w}},
              {"pads", {g.pad_top, g.pad_left, g.pad_bottom, g.pad_right}},
              {"pads_order", "top, left, bottom, right"}};
}

// The accumulators of a linear node, in the output's layout.
template <typename TA>
Result<Tensor> LinearAccumulators(const NodeVectors& v, const Tensor& x, int32_t x_zp, const Tensor& w,
                                  const std::vector<int32_t>& w_zp, const Shape& y_shape, const LinearShape& ls) {
  OCTET_ASSIGN_OR_RETURN(Tensor acc, Tensor::Create(DType::kS32, y_shape));
  if (!IsInt8Op(v, Int8Op::kQConv)) {
    const int64_t n = ls.channels, k = w.shape().dim(ls.w_axis == 0 ? 1 : 0);
    const int64_t m = k == 0 ? 0 : x.NumElements() / k;
    if (x.shape().dim(x.shape().rank() - 1) != k || m * n != acc.NumElements()) {
      return InvalidArgument("node '{}' ({}): input {} and weight {} do not multiply into {}", v.name, v.op_type,
                             x.shape(), w.shape(), y_shape);
    }
    reference::QGemmOpAccumulate<TA>(m, n, k, x.data<TA>(), x_zp, w.data<int8_t>(), /*w_rows=*/ls.w_axis == 0,
                                     w_zp.data(), acc.data<int32_t>());
    return acc;
  }
  OCTET_ASSIGN_OR_RETURN(const reference::QConvOpGeometry g, ConvGeometry(v, x.shape(), w.shape()));
  const bool one_d = x.shape().rank() == 3;
  const int64_t cg = w.shape().dim(1);
  if (g.groups <= 0 || g.c_in != cg * g.groups || g.c_out % g.groups != 0) {
    return InvalidArgument("node '{}' (QConv): input {} and weight {} do not fit group {}", v.name, x.shape(),
                           w.shape(), g.groups);
  }
  const int64_t oh = g.OutH(), ow = g.OutW();
  if (y_shape.dim(0) != g.n || y_shape.dim(2) != (one_d ? ow : oh) || (!one_d && y_shape.dim(3) != ow)) {
    return InvalidArgument("node '{}' (QConv): the geometry gives {} x {} outputs, the output is {}", v.name, oh, ow,
                           y_shape);
  }
  reference::QConvOpAccumulate<TA>(g, x.data<TA>(), x_zp, w.data<int8_t>(), w_zp.data(), acc.data<int32_t>());
  return acc;
}

std::vector<int32_t> PerChannelZeroPoints(const QParams& qp, int64_t channels) {
  if (qp.per_channel()) return qp.zero_points();
  return std::vector<int32_t>(static_cast<size_t>(channels), qp.zero_point());
}

Status DeriveLinear(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* w, Need(v, "weight", 1));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  const VectorTensor* b = v.Find("bias", 2);
  OCTET_RETURN_IF_ERROR(CheckActivation(v, *x));
  OCTET_RETURN_IF_ERROR(CheckActivation(v, *y));
  OCTET_ASSIGN_OR_RETURN(const QParams* w_qp, NeedQParams(v, *w));
  if (w->tensor.dtype() != DType::kS8) return InvalidArgument("node '{}': the weight must be s8", v.name);
  OCTET_ASSIGN_OR_RETURN(const LinearShape ls, ReadLinearShape(v, x->tensor, w->tensor, y->tensor));
  if (w_qp->per_channel() && (w_qp->axis() != ls.w_axis || w_qp->num_channels() != ls.channels)) {
    return InvalidArgument("node '{}': the weight's per-channel qparams must be on axis {} with {} channels", v.name,
                           ls.w_axis, ls.channels);
  }
  const QParams& x_qp = *x->qparams;
  const QParams& y_qp = *y->qparams;
  const std::vector<int32_t> w_zp = PerChannelZeroPoints(*w_qp, ls.channels);
  Result<Tensor> acc =
      x->tensor.dtype() == DType::kU8
          ? LinearAccumulators<uint8_t>(v, x->tensor, x_qp.zero_point(), w->tensor, w_zp, y->tensor.shape(), ls)
          : LinearAccumulators<int8_t>(v, x->tensor, x_qp.zero_point(), w->tensor, w_zp, y->tensor.shape(), ls);
  if (!acc.ok()) return acc.status();

  OCTET_ASSIGN_OR_RETURN(const reference::QGemmStage stage, Scheme(v));
  OCTET_ASSIGN_OR_RETURN(const Bounds bounds, ActivationBounds(v, y_qp));
  if (b != nullptr && b->tensor.NumElements() != ls.channels) {
    return InvalidArgument("node '{}': the bias has {} values for {} channels", v.name, b->tensor.NumElements(),
                           ls.channels);
  }
  if (b != nullptr && b->tensor.dtype() == DType::kS32 && stage == reference::QGemmStage::kFbgemm) {
    return InvalidArgument("node '{}': an s32 bias with requantization fbgemm", v.name);
  }
  const size_t c = static_cast<size_t>(ls.channels);
  std::vector<float> multipliers(c), bias_f32(c, 0.0f);
  std::vector<int32_t> q31_m(c), q31_s(c), bias_s32(c, 0);
  const float x_s = x_qp.scale(), y_s = y_qp.scale();
  for (size_t j = 0; j < c; ++j) {
    const float w_s = w_qp->per_channel() ? w_qp->scales()[j] : w_qp->scale();
    const float bias_f = b != nullptr && b->tensor.dtype() == DType::kF32 ? b->tensor.data<float>()[j] : 0.0f;
    if (b != nullptr && b->tensor.dtype() == DType::kS32) bias_s32[j] = b->tensor.data<int32_t>()[j];
    if (b != nullptr && b->tensor.dtype() == DType::kF32 && stage != reference::QGemmStage::kFbgemm) {
      bias_s32[j] = reference::QuantizeBias(bias_f, x_s, w_s);
    }
    switch (stage) {
      case reference::QGemmStage::kFp32: multipliers[j] = reference::QGemmFp32Multiplier(x_s, w_s, y_s); break;
      case reference::QGemmStage::kQ31: reference::QGemmQ31Multiplier(x_s, w_s, y_s, &q31_m[j], &q31_s[j]); break;
      case reference::QGemmStage::kFbgemm:
        reference::QGemmFbgemmParams(x_s, w_s, y_s, bias_f, &multipliers[j], &bias_f32[j]);
        break;
      default: return Internal("unexpected stage");
    }
  }
  // Appended last: pushing into v.tensors invalidates x, w, y and b.
  const Shape cs{ls.channels};
  std::vector<VectorTensor> derived;
  derived.push_back({"accumulator", 0, "", std::move(*acc), std::nullopt});
  if (stage == reference::QGemmStage::kQ31) {
    derived.push_back({"q31_multiplier", 0, "", VectorTensorOf(cs, q31_m), std::nullopt});
    derived.push_back({"q31_shift", 0, "", VectorTensorOf(cs, q31_s), std::nullopt});
  } else {
    derived.push_back({"multiplier", 0, "", VectorTensorOf(cs, multipliers), std::nullopt});
    // Power-of-two scales (a --target with power_of_two_scales) make every multiplier 2^-n: record n, the shift that
    // hardware applies instead of a multiply (rounding half to even, as the multiply and round do), and replay from it.
    std::vector<int32_t> shifts(c);
    bool all_pow2 = stage == reference::QGemmStage::kFp32;
    for (size_t j = 0; j < c && all_pow2; ++j) {
      int exponent = 0;
      all_pow2 = multipliers[j] > 0.0f && std::frexp(multipliers[j], &exponent) == 0.5f;
      shifts[j] = 1 - exponent;  // multiplier = 0.5 * 2^exponent = 2^-(1 - exponent)
    }
    if (all_pow2) derived.push_back({"requant_shift", 0, "", VectorTensorOf(cs, shifts), std::nullopt});
  }
  if (stage == reference::QGemmStage::kFbgemm) {
    derived.push_back({"bias_acc", 0, "", VectorTensorOf(cs, bias_f32), std::nullopt});
  } else {
    derived.push_back({"bias_acc", 0, "", VectorTensorOf(cs, bias_s32), std::nullopt});
  }
  OCTET_ASSIGN_OR_RETURN(const std::string activation, v.attributes.GetString("activation", ""));
  v.params["requantization"] = {{"scheme", reference::QGemmStageName(stage)},
                                {"activation", activation},
                                {"channels", ls.channels},
                                {"channel_axis", ls.channel_axis},
                                {"output_dtype", DTypeName(y_qp.dtype())},
                                {"zero_point", y_qp.zero_point()},
                                {"lo", bounds.lo},
                                {"hi", bounds.hi}};
  if (IsInt8Op(v, Int8Op::kQConv)) {
    OCTET_ASSIGN_OR_RETURN(const reference::QConvOpGeometry g, ConvGeometry(v, x->tensor.shape(), w->tensor.shape()));
    v.params["geometry"] = ConvGeometryJson(g);
  }
  for (VectorTensor& t : derived) v.tensors.push_back(std::move(t));
  return OkStatus();
}

// y = stage(recorded accumulator) with the recorded per-channel arrays, through reference::QGemmApplyStage.
Result<Tensor> ReplayLinearOutput(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* acc, Need(v, "accumulator"));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* bias, Need(v, "bias_acc"));
  const json& r = v.params.at("requantization");
  const std::string scheme = r.at("scheme");
  const int axis = r.at("channel_axis");
  const int64_t channels = r.at("channels");
  if (acc->tensor.dtype() != DType::kS32 || acc->tensor.shape() != y->tensor.shape() || axis < 0 ||
      axis >= y->tensor.shape().rank() || y->tensor.shape().dim(axis) != channels ||
      bias->tensor.NumElements() != channels) {
    return InvalidArgument("node '{}': accumulator {} {}, output {} and {} channels disagree", v.name,
                           acc->tensor.dtype(), acc->tensor.shape(), y->tensor.shape(), channels);
  }
  reference::QGemmStageParams p;
  p.signed_output = y->tensor.dtype() == DType::kS8;
  p.zero_point = r.at("zero_point");
  p.lo = r.at("lo");
  p.hi = r.at("hi");
  const VectorTensor *m = nullptr, *qm = nullptr, *qs = nullptr;
  if (scheme == "q31") {
    p.stage = reference::QGemmStage::kQ31;
    OCTET_ASSIGN_OR_RETURN(qm, Need(v, "q31_multiplier"));
    OCTET_ASSIGN_OR_RETURN(qs, Need(v, "q31_shift"));
  } else {
    p.stage = scheme == "fp32" ? reference::QGemmStage::kFp32 : reference::QGemmStage::kFbgemm;
    OCTET_ASSIGN_OR_RETURN(m, Need(v, "multiplier"));
  }
  const VectorTensor* shift = p.stage == reference::QGemmStage::kFp32 ? v.Find("requant_shift", 0) : nullptr;
  for (const VectorTensor* t : {m, qm, qs, shift}) {
    if (t != nullptr && t->tensor.NumElements() != channels) {
      return InvalidArgument("node '{}': {} has {} values for {} channels", v.name, t->role, t->tensor.NumElements(),
                             channels);
    }
  }
  // With a requant_shift the shift is what requantizes (2^-n); the multiplier it stands for must agree.
  std::vector<float> shifted;
  if (shift != nullptr) {
    if (shift->tensor.dtype() != DType::kS32) return InvalidArgument("node '{}': requant_shift must be s32", v.name);
    for (int64_t j = 0; j < channels; ++j) {
      const int32_t n = shift->tensor.data<int32_t>()[j];
      const float by_shift = n < -126 || n > 149 ? 0.0f : std::ldexp(1.0f, -n);
      if (by_shift == 0.0f || by_shift != m->tensor.data<float>()[j]) {
        return InvalidArgument("node '{}': requant_shift {} of channel {} is not its multiplier {}", v.name, n, j,
                               m->tensor.data<float>()[j]);
      }
      shifted.push_back(by_shift);
    }
  }
  const bool float_bias = p.stage == reference::QGemmStage::kFbgemm;
  if (bias->tensor.dtype() != (float_bias ? DType::kF32 : DType::kS32)) {
    return InvalidArgument("node '{}': bias_acc must be {} for {}", v.name, float_bias ? "f32" : "s32", scheme);
  }
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y->tensor.dtype(), y->tensor.shape()));
  const int64_t inner = Inner(y->tensor.shape(), axis);
  const int32_t* pa = acc->tensor.data<int32_t>();
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    const size_t ch = static_cast<size_t>((i / inner) % channels);
    reference::QGemmStageParams q = p;
    if (m != nullptr) q.multipliers = (shifted.empty() ? m->tensor.data<float>() : shifted.data()) + ch;
    if (qm != nullptr) {
      q.q31_multipliers = qm->tensor.data<int32_t>() + ch;
      q.q31_shifts = qs->tensor.data<int32_t>() + ch;
    }
    if (float_bias) {
      q.bias_f32 = bias->tensor.data<float>() + ch;
    } else {
      q.bias_s32 = bias->tensor.data<int32_t>() + ch;
      const int64_t sum = int64_t{pa[i]} + q.bias_s32[0];
      if (sum < std::numeric_limits<int32_t>::min() || sum > std::numeric_limits<int32_t>::max()) {
        return OutOfRange("node '{}': accumulator {} + bias {} at element {} leaves int32", v.name, pa[i],
                          q.bias_s32[0], i);
      }
    }
    reference::QGemmApplyStage(1, 1, pa + i, 1, q, static_cast<std::byte*>(out.raw_data()) + i, 1);
  }
  return out;
}

// ---- Quantize, Dequantize, Requantize ----

Status DeriveQuantize(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const std::string rounding, v.attributes.GetString("rounding", "half_even"));
  OCTET_ASSIGN_OR_RETURN(const std::string non_finite, v.attributes.GetString("non_finite", "error"));
  if ((rounding != "half_even" && rounding != "half_away") || (non_finite != "error" && non_finite != "quant_min")) {
    return InvalidArgument("node '{}': rounding \"{}\" / non_finite \"{}\" unknown", v.name, rounding, non_finite);
  }
  v.params["quantize"] = {{"rounding", rounding}, {"non_finite", non_finite}};
  return OkStatus();
}

// Per element channel of `qp` for a tensor of `shape` (0 when per tensor).
Result<std::pair<int64_t, int64_t>> ChannelLayout(const NodeVectors& v, const QParams& qp, const Shape& shape) {
  if (!qp.per_channel()) return std::pair<int64_t, int64_t>{1, 1};
  OCTET_RETURN_IF_ERROR(qp.ValidateFor(shape, v.name));
  return std::pair<int64_t, int64_t>{Inner(shape, qp.axis()), qp.num_channels()};
}

Result<Tensor> ReplayQuantize(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  OCTET_ASSIGN_OR_RETURN(const QParams* qp, NeedQParams(v, *y));
  if (x->tensor.dtype() != DType::kF32 || x->tensor.shape() != y->tensor.shape() || qp->dtype() != y->tensor.dtype()) {
    return InvalidArgument("node '{}': Quantize needs an f32 input and an output of its qparams' dtype", v.name);
  }
  const json& q = v.params.at("quantize");
  const bool half_away = q.at("rounding") == "half_away";
  const bool quant_min = q.at("non_finite") == "quant_min";
  OCTET_ASSIGN_OR_RETURN(const auto layout, ChannelLayout(v, *qp, x->tensor.shape()));
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y->tensor.dtype(), y->tensor.shape()));
  const float* px = x->tensor.data<float>();
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    const size_t c = static_cast<size_t>((i / layout.first) % layout.second);
    const float scale = qp->scales()[c], inv = 1.0f / scale;
    const int32_t zp = qp->zero_points()[c];
    SetCode(out, i,
            reference::QuantizeOpValue<int32_t>(
                px[i], scale, inv, zp, qp->quant_min(), qp->quant_max(),
                half_away ? reference::QuantizeOpRounding::kHalfAway : reference::QuantizeOpRounding::kHalfEven,
                quant_min));
  }
  return out;
}

Result<Tensor> ReplayDequantize(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const QParams* qp, NeedQParams(v, *x));
  if (x->tensor.dtype() == DType::kF32 || qp->dtype() != x->tensor.dtype()) {
    return InvalidArgument("node '{}': Dequantize needs an integer input of its qparams' dtype", v.name);
  }
  OCTET_ASSIGN_OR_RETURN(const auto layout, ChannelLayout(v, *qp, x->tensor.shape()));
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(DType::kF32, x->tensor.shape()));
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    const size_t c = static_cast<size_t>((i / layout.first) % layout.second);
    out.data<float>()[i] = reference::DequantizeValue(CodeAt(x->tensor, i), qp->scales()[c], qp->zero_points()[c]);
  }
  return out;
}

Status DeriveRequantize(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const auto io, NeedActivations(v));
  const auto [x, y] = io;
  const QParams &xq = *x->qparams, &yq = *y->qparams;
  v.params["requantization"] = {{"scheme", "fp32"},
                                {"multiplier", reference::RequantizeQ8Multiplier(xq.scale(), yq.scale())},
                                {"input_zero_point", xq.zero_point()},
                                {"zero_point", yq.zero_point()},
                                {"lo", yq.quant_min()},
                                {"hi", yq.quant_max()}};
  return OkStatus();
}

Result<Tensor> ReplayRequantize(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  const json& r = v.params.at("requantization");
  const float m = r.at("multiplier");
  const int32_t x_zp = r.at("input_zero_point"), zp = r.at("zero_point"), lo = r.at("lo"), hi = r.at("hi");
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y->tensor.dtype(), x->tensor.shape()));
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    SetCode(out, i, reference::RequantizeQ8Value(CodeAt(x->tensor, i), x_zp, m, zp, lo, hi));
  }
  return out;
}

// ---- pools ----

Result<float_ops::PoolGeometry> PoolGeometryOf(const NodeVectors& v, const Shape& x, bool is_max) {
  Node node;
  node.name = v.name;
  node.op_type = v.op_type;
  node.domain = v.domain;
  node.attributes = v.attributes;
  node.inputs = {0};
  node.outputs = {1};
  ValueInfo info;
  info.present = true;
  info.dtype = DType::kU8;
  info.shape = x;
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  const OpPrepareArgs args{node, std::span<const ValueInfo>(&info, 1), context, Shape::kMaxElements, {}, {}};
  return float_ops::PreparePoolGeometry(args, is_max);
}

Status DerivePool(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const auto io, NeedActivations(v));
  const auto [x, y] = io;
  const bool global = IsInt8Op(v, Int8Op::kQGlobalMaxPool) || IsInt8Op(v, Int8Op::kQGlobalAveragePool);
  const bool is_max = IsInt8Op(v, Int8Op::kQMaxPool) || IsInt8Op(v, Int8Op::kQGlobalMaxPool);
  const QParams &xq = *x->qparams, &yq = *y->qparams;
  if (!global) {
    OCTET_ASSIGN_OR_RETURN(const float_ops::PoolGeometry g, PoolGeometryOf(v, x->tensor.shape(), is_max));
    v.params["geometry"] = {{"planes", g.planes},
                            {"input", {g.h, g.w}},
                            {"output", {g.oh, g.ow}},
                            {"kernel", {g.kh, g.kw}},
                            {"strides", {g.sh, g.sw}},
                            {"dilations", {g.dh, g.dw}},
                            {"pads", {g.pad_top, g.pad_left, g.pad_bottom, g.pad_right}},
                            {"pads_order", "top, left, bottom, right"},
                            {"count_include_pad", g.count_include_pad}};
  }
  if (is_max) {
    v.params["max"] = {{"empty", xq.quant_min()}};
  } else {
    v.params["requantization"] = {{"scheme", "fp32"},
                                  {"multiplier_rule", "f32(x_scale / f32(y_scale * f32(n)))"},
                                  {"x_scale", xq.scale()},
                                  {"y_scale", yq.scale()},
                                  {"input_zero_point", xq.zero_point()},
                                  {"zero_point", yq.zero_point()},
                                  {"lo", yq.quant_min()},
                                  {"hi", yq.quant_max()}};
  }
  return OkStatus();
}

template <typename T>
Result<Tensor> ReplayPoolT(const NodeVectors& v, const Tensor& x, const Tensor& y) {
  const bool global = IsInt8Op(v, Int8Op::kQGlobalMaxPool) || IsInt8Op(v, Int8Op::kQGlobalAveragePool);
  const bool is_max = IsInt8Op(v, Int8Op::kQMaxPool) || IsInt8Op(v, Int8Op::kQGlobalMaxPool);
  reference::QAveragePoolParams q{};
  if (!is_max) {
    const json& r = v.params.at("requantization");
    q = {r.at("x_scale").get<float>(),      r.at("y_scale").get<float>(), r.at("input_zero_point").get<int32_t>(),
         r.at("zero_point").get<int32_t>(), r.at("lo").get<int32_t>(),    r.at("hi").get<int32_t>()};
  }
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y.dtype(), y.shape()));
  if (x.shape().rank() < 3) return InvalidArgument("node '{}': pool input must be [N, C, ...]", v.name);
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  if (global) {
    const int64_t spatial = x.shape().Product(2, x.shape().rank());
    if (out.NumElements() != planes || spatial == 0) return InvalidArgument("node '{}': bad global pool", v.name);
    if (is_max) {
      reference::QGlobalMaxPool<T>(planes, spatial, x.data<T>(), out.data<T>());
    } else {
      reference::QGlobalAveragePool<T>(planes, spatial, q, x.data<T>(), out.data<T>());
    }
    return out;
  }
  const json& gj = v.params.at("geometry");
  reference::QPoolGeometry g;
  g.planes = gj.at("planes");
  g.h = gj.at("input")[0];
  g.w = gj.at("input")[1];
  g.oh = gj.at("output")[0];
  g.ow = gj.at("output")[1];
  g.kh = gj.at("kernel")[0];
  g.kw = gj.at("kernel")[1];
  g.sh = gj.at("strides")[0];
  g.sw = gj.at("strides")[1];
  g.dh = gj.at("dilations")[0];
  g.dw = gj.at("dilations")[1];
  g.pad_top = gj.at("pads")[0];
  g.pad_left = gj.at("pads")[1];
  g.pad_bottom = gj.at("pads")[2];
  g.pad_right = gj.at("pads")[3];
  g.count_include_pad = gj.at("count_include_pad");
  if (g.planes != planes || g.planes * g.h * g.w != x.NumElements() || g.planes * g.oh * g.ow != out.NumElements()) {
    return InvalidArgument("node '{}': the pool geometry does not match input {} and output {}", v.name, x.shape(),
                           y.shape());
  }
  if (is_max) {
    reference::QMaxPool<T>(g, x.data<T>(), out.data<T>(), v.params.at("max").at("empty").get<int32_t>());
  } else {
    reference::QAveragePool<T>(g, q, x.data<T>(), out.data<T>());
  }
  return out;
}

Result<Tensor> ReplayPool(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  if (x->tensor.dtype() != y->tensor.dtype()) return InvalidArgument("node '{}': X and Y dtypes differ", v.name);
  if (x->tensor.dtype() == DType::kU8) return ReplayPoolT<uint8_t>(v, x->tensor, y->tensor);
  return ReplayPoolT<int8_t>(v, x->tensor, y->tensor);
}

// ---- QAdd, QMul ----

Status DeriveBinary(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* a, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* b, Need(v, "input", 1));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  for (const VectorTensor* t : {a, b, y}) OCTET_RETURN_IF_ERROR(CheckActivation(v, *t));
  OCTET_ASSIGN_OR_RETURN(const Bounds bounds, ActivationBounds(v, *y->qparams));
  OCTET_ASSIGN_OR_RETURN(const reference::QGemmStage stage, Scheme(v));
  const reference::QOperand qa{a->qparams->scale(), a->qparams->zero_point()};
  const reference::QOperand qb{b->qparams->scale(), b->qparams->zero_point()};
  const reference::QOperand qy{y->qparams->scale(), y->qparams->zero_point()};
  const bool add = IsInt8Op(v, Int8Op::kQAdd);
  json r = {{"scheme", stage == reference::QGemmStage::kQ31 ? "q31" : "fp32"},
            {"a_zero_point", qa.zero_point},
            {"b_zero_point", qb.zero_point},
            {"zero_point", qy.zero_point},
            {"lo", bounds.lo},
            {"hi", bounds.hi}};
  if (stage == reference::QGemmStage::kFp32 && add) {
    OCTET_ASSIGN_OR_RETURN(const auto p, reference::MakeQAddFp32Params(qa, qb, qy, bounds.lo, bounds.hi));
    r["a_multiplier"] = p.a_mult;
    r["b_multiplier"] = p.b_mult;
  } else if (stage == reference::QGemmStage::kFp32) {
    OCTET_ASSIGN_OR_RETURN(const auto p, reference::MakeQMulFp32Params(qa, qb, qy, bounds.lo, bounds.hi));
    r["multiplier"] = p.mult;
  } else if (stage == reference::QGemmStage::kQ31 && add) {
    OCTET_ASSIGN_OR_RETURN(const auto p, reference::MakeQAddQ31Params(qa, qb, qy, bounds.lo, bounds.hi));
    r["left_shift"] = p.left_shift;
    r["a_multiplier"] = p.a_mult;
    r["a_shift"] = p.a_shift;
    r["b_multiplier"] = p.b_mult;
    r["b_shift"] = p.b_shift;
    r["y_multiplier"] = p.y_mult;
    r["y_shift"] = p.y_shift;
  } else if (stage == reference::QGemmStage::kQ31) {
    OCTET_ASSIGN_OR_RETURN(const auto p, reference::MakeQMulQ31Params(qa, qb, qy, bounds.lo, bounds.hi));
    r["multiplier"] = p.mult;
    r["shift"] = p.shift;
  } else {
    return InvalidArgument("node '{}': {} has no fbgemm requantization", v.name, v.op_type);
  }
  v.params["requantization"] = std::move(r);
  return OkStatus();
}

template <typename T>
Result<Tensor> ReplayBinaryT(const NodeVectors& v, const Tensor& a, const Tensor& b, const Tensor& y) {
  const json& r = v.params.at("requantization");
  const int32_t a_zp = r.at("a_zero_point"), b_zp = r.at("b_zero_point"), zp = r.at("zero_point");
  const int32_t lo = r.at("lo"), hi = r.at("hi");
  OCTET_ASSIGN_OR_RETURN(const Shape shape, float_ops::BroadcastShapes(a.shape(), b.shape()));
  if (shape != y.shape())
    return InvalidArgument("node '{}': broadcast shape {} != output {}", v.name, shape, y.shape());
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y.dtype(), y.shape()));
  const bool add = IsInt8Op(v, Int8Op::kQAdd);
  auto walk = [&](auto f) {
    reference::BroadcastElementwise<T>(a.shape(), a.data<T>(), b.shape(), b.data<T>(), shape, out.data<T>(), f);
  };
  if (r.at("scheme") == "fp32" && add) {
    const reference::QAddFp32Params p{r.at("a_multiplier"), r.at("b_multiplier"), a_zp, b_zp, zp, lo, hi};
    walk([&](int32_t x0, int32_t x1) { return reference::QAddFp32Value(x0, x1, p); });
  } else if (r.at("scheme") == "fp32") {
    const reference::QMulFp32Params p{r.at("multiplier"), a_zp, b_zp, zp, lo, hi};
    walk([&](int32_t x0, int32_t x1) { return reference::QMulFp32Value(x0, x1, p); });
  } else if (add) {
    const reference::QAddQ31Params p{r.at("a_multiplier"),
                                     r.at("a_shift"),
                                     r.at("b_multiplier"),
                                     r.at("b_shift"),
                                     r.at("y_multiplier"),
                                     r.at("y_shift"),
                                     r.at("left_shift"),
                                     a_zp,
                                     b_zp,
                                     zp,
                                     lo,
                                     hi};
    walk([&](int32_t x0, int32_t x1) { return reference::QAddQ31Value(x0, x1, p); });
  } else {
    const reference::QMulQ31Params p{r.at("multiplier"), r.at("shift"), a_zp, b_zp, zp, lo, hi};
    walk([&](int32_t x0, int32_t x1) { return reference::QMulQ31Value(x0, x1, p); });
  }
  return out;
}

Result<Tensor> ReplayBinary(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* a, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* b, Need(v, "input", 1));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  if (a->tensor.dtype() != b->tensor.dtype() || a->tensor.dtype() != y->tensor.dtype()) {
    return InvalidArgument("node '{}': A, B and C must have one dtype", v.name);
  }
  if (a->tensor.dtype() == DType::kU8) return ReplayBinaryT<uint8_t>(v, a->tensor, b->tensor, y->tensor);
  return ReplayBinaryT<int8_t>(v, a->tensor, b->tensor, y->tensor);
}

// ---- QClamp, QLookup, QConcat, shape-only ----

Status DeriveClamp(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_RETURN_IF_ERROR(CheckActivation(v, *x));
  constexpr float kInf = std::numeric_limits<float>::infinity();
  OCTET_ASSIGN_OR_RETURN(const float min, v.attributes.GetFloat("min", -kInf));
  OCTET_ASSIGN_OR_RETURN(const float max, v.attributes.GetFloat("max", kInf));
  const QParams& q = *x->qparams;
  const float inv = 1.0f / q.scale();
  v.params["clamp"] = {
      {"lo", reference::QuantizeValue<int32_t>(min, inv, q.zero_point(), q.quant_min(), q.quant_max())},
      {"hi", reference::QuantizeValue<int32_t>(max, inv, q.zero_point(), q.quant_min(), q.quant_max())}};
  return OkStatus();
}

Result<Tensor> ReplayClamp(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  const int32_t lo = v.params.at("clamp").at("lo"), hi = v.params.at("clamp").at("hi");
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(x->tensor.dtype(), x->tensor.shape()));
  for (int64_t i = 0; i < out.NumElements(); ++i) SetCode(out, i, std::min(std::max(CodeAt(x->tensor, i), lo), hi));
  return out;
}

Status DeriveLookup(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const auto io, NeedActivations(v));
  const auto [x, y] = io;
  OCTET_ASSIGN_OR_RETURN(const std::string name, v.attributes.GetString("function"));
  OCTET_ASSIGN_OR_RETURN(const std::string approximate, v.attributes.GetString("approximate", "none"));
  OCTET_ASSIGN_OR_RETURN(const reference::LookupFunction f, reference::ParseLookupFunction(name, approximate));
  reference::QLookupParams p;
  p.function = f;
  OCTET_ASSIGN_OR_RETURN(p.alpha,
                         v.attributes.GetFloat("alpha", f == reference::LookupFunction::kLeakyRelu ? 0.01f : 0.2f));
  OCTET_ASSIGN_OR_RETURN(p.beta, v.attributes.GetFloat("beta", 0.5f));
  p.x_dtype = x->tensor.dtype();
  p.x_scale = x->qparams->scale();
  p.x_zp = x->qparams->zero_point();
  p.y_scale = y->qparams->scale();
  p.y_zp = y->qparams->zero_point();
  p.y_quant_min = y->qparams->quant_min();
  p.y_quant_max = y->qparams->quant_max();
  const std::array<int32_t, 256> table = reference::BuildLookupTable(p);
  v.tensors.push_back(
      {"table", 0, "", VectorTensorOf(Shape{256}, std::vector<int32_t>(table.begin(), table.end())), std::nullopt});
  v.params["lookup"] = {{"function", name}, {"alpha", p.alpha}, {"beta", p.beta}, {"index", "uint8_t(x)"}};
  return OkStatus();
}

Result<Tensor> ReplayLookup(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* table, Need(v, "table"));
  if (table->tensor.dtype() != DType::kS32 || table->tensor.NumElements() != 256) {
    return InvalidArgument("node '{}': the table must be s32 [256]", v.name);
  }
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y->tensor.dtype(), x->tensor.shape()));
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    SetCode(out, i, table->tensor.data<int32_t>()[static_cast<uint8_t>(CodeAt(x->tensor, i))]);
  }
  return out;
}

Status DeriveConcat(NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  OCTET_RETURN_IF_ERROR(CheckActivation(v, *y));
  OCTET_ASSIGN_OR_RETURN(const int64_t axis_attr, v.attributes.GetInt("axis"));
  OCTET_ASSIGN_OR_RETURN(const int axis, float_ops::NormalizeAxis(axis_attr, y->tensor.shape().rank()));
  const QParams& yq = *y->qparams;
  json inputs = json::array();
  for (int slot = 0; v.Find("input", slot) != nullptr; ++slot) {
    const VectorTensor* x = v.Find("input", slot);
    OCTET_RETURN_IF_ERROR(CheckActivation(v, *x));
    const QParams& xq = *x->qparams;
    const bool same = xq.dtype() == yq.dtype() && xq.scale() == yq.scale() && xq.zero_point() == yq.zero_point() &&
                      xq.quant_min() == yq.quant_min() && xq.quant_max() == yq.quant_max();
    json in = {{"requantize", !same}};
    if (!same) {
      in["multiplier"] = reference::QConcatMultiplier(xq.scale(), yq.scale());
      in["input_zero_point"] = xq.zero_point();
    }
    inputs.push_back(std::move(in));
  }
  v.params["concat"] = {{"axis", axis},
                        {"inputs", std::move(inputs)},
                        {"zero_point", yq.zero_point()},
                        {"lo", yq.quant_min()},
                        {"hi", yq.quant_max()}};
  return OkStatus();
}

Result<Tensor> ReplayConcat(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  const json& c = v.params.at("concat");
  const int axis = c.at("axis");
  const int32_t zp = c.at("zero_point"), lo = c.at("lo"), hi = c.at("hi");
  const Shape& ys = y->tensor.shape();
  if (axis < 0 || axis >= ys.rank()) return InvalidArgument("node '{}': bad concat axis {}", v.name, axis);
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y->tensor.dtype(), ys));
  const int64_t outer = ys.Product(0, axis), y_row = ys.Product(axis, ys.rank());
  int64_t offset = 0;
  for (size_t slot = 0; slot < c.at("inputs").size(); ++slot) {
    OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", static_cast<int>(slot)));
    const json& in = c.at("inputs")[slot];
    const int64_t row = x->tensor.shape().Product(axis, x->tensor.shape().rank());
    if (x->tensor.shape().Product(0, axis) != outer || offset + row > y_row) {
      return InvalidArgument("node '{}': input {} {} does not fit output {}", v.name, slot, x->tensor.shape(), ys);
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < row; ++k) {
        const int32_t code = CodeAt(x->tensor, o * row + k);
        SetCode(out, o * y_row + offset + k,
                in.at("requantize") ? reference::QConcatRequantizeValue(code, in.at("input_zero_point").get<int32_t>(),
                                                                        in.at("multiplier").get<float>(), zp, lo, hi)
                                    : code);
      }
    }
    offset += row;
  }
  return out;
}

Result<Tensor> ReplayShapeOnly(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  if (x->tensor.dtype() != y->tensor.dtype() || x->tensor.NumElements() != y->tensor.NumElements()) {
    return InvalidArgument("node '{}' ({}): input {} {} and output {} {} are not one tensor reshaped", v.name,
                           v.op_type, x->tensor.dtype(), x->tensor.shape(), y->tensor.dtype(), y->tensor.shape());
  }
  return x->tensor.Clone().value().Reshaped(y->tensor.shape());
}

// y[j] = x[i] with y's index j_d = x's index i_perm[d] (ONNX Transpose; perm defaults to the reversed axes).
Result<Tensor> ReplayTranspose(const NodeVectors& v) {
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* x, Need(v, "input", 0));
  OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(v, "output", 0));
  const Shape& xs = x->tensor.shape();
  const int rank = xs.rank();
  std::vector<int64_t> reversed(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) reversed[static_cast<size_t>(d)] = rank - 1 - d;
  OCTET_ASSIGN_OR_RETURN(const std::vector<int64_t> perm, v.attributes.GetInts("perm", reversed));
  std::vector<int64_t> dims;
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || used[static_cast<size_t>(p)]) {
      return InvalidArgument("node '{}': perm [{}] is not a permutation of {} axes", v.name, fmt::join(perm, ", "),
                             rank);
    }
    used[static_cast<size_t>(p)] = true;
    dims.push_back(xs.dim(static_cast<int>(p)));
  }
  if (static_cast<int>(perm.size()) != rank || Shape(dims) != y->tensor.shape() ||
      x->tensor.dtype() != y->tensor.dtype()) {
    return InvalidArgument("node '{}': input {} {} transposed by [{}] is not output {} {}", v.name, x->tensor.dtype(),
                           xs, fmt::join(perm, ", "), y->tensor.dtype(), y->tensor.shape());
  }
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(y->tensor.dtype(), y->tensor.shape()));
  std::vector<int64_t> x_strides(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d)
    x_strides[static_cast<size_t>(d)] = x_strides[static_cast<size_t>(d) + 1] * xs.dim(d + 1);
  const size_t size = DTypeSize(out.dtype());
  for (int64_t j = 0; j < out.NumElements(); ++j) {
    int64_t rem = j, i = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t idx = rem % dims[static_cast<size_t>(d)];
      rem /= dims[static_cast<size_t>(d)];
      i += idx * x_strides[static_cast<size_t>(perm[static_cast<size_t>(d)])];
    }
    std::memcpy(static_cast<std::byte*>(out.raw_data()) + static_cast<size_t>(j) * size,
                static_cast<const std::byte*>(x->tensor.raw_data()) + static_cast<size_t>(i) * size, size);
  }
  return out;
}

Status DeriveNothing(NodeVectors&) { return OkStatus(); }

// How test vectors derive and replay each int8 operator with the op-level references; nullopt for those without
// one (the op table's `reference` says which). A new Int8Op without a case fails to compile (-Wswitch).
struct ReplayRule {
  Status (*derive)(NodeVectors&);
  Result<Tensor> (*output)(const NodeVectors&);
};
std::optional<ReplayRule> RuleOf(Int8Op op) {
  switch (op) {
    case Int8Op::kQuantize: return ReplayRule{DeriveQuantize, ReplayQuantize};
    case Int8Op::kDequantize: return ReplayRule{DeriveNothing, ReplayDequantize};
    case Int8Op::kRequantize: return ReplayRule{DeriveRequantize, ReplayRequantize};
    case Int8Op::kQConv:
    case Int8Op::kQGemm:
    case Int8Op::kQMatMul: return ReplayRule{DeriveLinear, ReplayLinearOutput};
    case Int8Op::kQAdd:
    case Int8Op::kQMul: return ReplayRule{DeriveBinary, ReplayBinary};
    case Int8Op::kQMaxPool:
    case Int8Op::kQAveragePool:
    case Int8Op::kQGlobalMaxPool:
    case Int8Op::kQGlobalAveragePool: return ReplayRule{DerivePool, ReplayPool};
    case Int8Op::kQConcat: return ReplayRule{DeriveConcat, ReplayConcat};
    case Int8Op::kQLookup: return ReplayRule{DeriveLookup, ReplayLookup};
    case Int8Op::kQClamp: return ReplayRule{DeriveClamp, ReplayClamp};
    case Int8Op::kDynamicQGemm:
    case Int8Op::kDynamicQMatMul:
    case Int8Op::kDynamicQLSTM:
    case Int8Op::kDynamicQGRU:
    case Int8Op::kQLayerNorm:
    case Int8Op::kQSoftmax:
    case Int8Op::kQBatchMatMul: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ReplayRule> RuleOf(const std::string& domain, const std::string& op_type) {
  const std::optional<Int8Op> op = FindInt8Op(domain, op_type);
  return op ? RuleOf(*op) : std::nullopt;
}

Result<Tensor> ReferenceOutput(const NodeVectors& v) {
  if (IsTranspose(v.domain, v.op_type)) return ReplayTranspose(v);
  if (IsShapeOnly(v.domain, v.op_type)) return ReplayShapeOnly(v);
  if (const std::optional<ReplayRule> rule = RuleOf(v.domain, v.op_type)) return rule->output(v);
  return Unimplemented("node '{}': no reference replay for {}", v.name, v.op_type);
}

// Derive and the replay read the params with json::at and get<>, which throw on a malformed manifest.
template <typename Fn>
auto Guarded(const NodeVectors& v, Fn fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const json::exception& e) {
    return InvalidArgument("node '{}' ({}): malformed parameters in the manifest: {}", v.name, v.op_type, e.what());
  }
}

}  // namespace

const VectorTensor* NodeVectors::Find(const std::string& role, int slot) const {
  for (const VectorTensor& t : tensors) {
    if (t.role == role && t.slot == slot) return &t;
  }
  return nullptr;
}

bool HasReference(const std::string& domain, const std::string& op) {
  if (IsShapeOnly(domain, op) || IsTranspose(domain, op)) return true;
  return RuleOf(domain, op).has_value();
}

bool IsDerivedRole(const std::string& role) {
  return role == "accumulator" || role == "multiplier" || role == "q31_multiplier" || role == "q31_shift" ||
         role == "bias_acc" || role == "table";
}

Status DeriveNodeVectors(NodeVectors& v) {
  return Guarded(v, [&]() -> Status {
    if (const std::optional<ReplayRule> rule = RuleOf(v.domain, v.op_type)) return rule->derive(v);
    return OkStatus();  // shape-only and unreplayed ops record nothing more
  });
}

Status ReplayNode(const NodeVectors& recorded, int64_t* elements) {
  if (!HasReference(recorded.domain, recorded.op_type)) {
    return Unimplemented("node '{}': no reference replay for {}", recorded.name, recorded.op_type);
  }
  // 1. Derived tensors and params again from the primary tensors, qparams and attributes.
  NodeVectors fresh;
  fresh.index = recorded.index;
  fresh.name = recorded.name;
  fresh.op_type = recorded.op_type;
  fresh.domain = recorded.domain;
  fresh.attributes = recorded.attributes;
  for (const VectorTensor& t : recorded.tensors) {
    if (!IsDerivedRole(t.role)) fresh.tensors.push_back(t);
  }
  OCTET_RETURN_IF_ERROR(DeriveNodeVectors(fresh));
  for (const VectorTensor& t : fresh.tensors) {
    if (!IsDerivedRole(t.role)) continue;
    const VectorTensor* r = recorded.Find(t.role, t.slot);
    if (r == nullptr) return DataLoss("node '{}' ({}): no {} recorded", recorded.name, recorded.op_type, t.role);
    OCTET_RETURN_IF_ERROR(Compare(recorded, t.role, r->tensor, t.tensor, t.role == "accumulator" ? elements : nullptr));
  }
  for (const VectorTensor& t : recorded.tensors) {
    if (IsDerivedRole(t.role) && fresh.Find(t.role, t.slot) == nullptr) {
      return DataLoss("node '{}' ({}): unexpected {} recorded", recorded.name, recorded.op_type, t.role);
    }
  }
  if (fresh.params != recorded.params) {
    return DataLoss("node '{}' ({}): the recorded parameters {} differ from those derived from the qparams {}",
                    recorded.name, recorded.op_type, recorded.params.dump(), fresh.params.dump());
  }
  // 2. The outputs from the recorded inputs, accumulators and parameters.
  return Guarded(recorded, [&]() -> Status {
    OCTET_ASSIGN_OR_RETURN(const VectorTensor* y, Need(recorded, "output", 0));
    OCTET_ASSIGN_OR_RETURN(const Tensor out, ReferenceOutput(recorded));
    return Compare(recorded, "output 0", y->tensor, out, elements);
  });
}

}  // namespace octet::vectors
