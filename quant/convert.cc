// Convert: a calibrated prepared graph to int8 operators (see convert.h).
#include "quant/convert.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <utility>

#include "core/float_op_table.h"
#include "core/op_table.h"
#include "core/verifier.h"
#include "observers/qparams_math.h"
#include "ops/int8/int8_ops.h"
#include "ops/reference/qgemm_reference.h"
#include "ops/reference/quantize_reference.h"
#include "quant/fuse_int8_activation.h"
#include "quant/fused_ops.h"
#include "quant/graph_rewrite.h"
#include "quant/quantizable_ops.h"

namespace octet {

namespace {

bool SameQParams(const QParams& a, const QParams& b) {
  return a.scheme() == b.scheme() && a.dtype() == b.dtype() && a.quant_min() == b.quant_min() &&
         a.quant_max() == b.quant_max() && a.axis() == b.axis() && a.scales() == b.scales() &&
         a.zero_points() == b.zero_points();
}

bool IsConstant(const Graph& g, ValueId v, DType dtype) {
  return v != kNoValue && g.value(v).kind == ValueKind::kConstant && g.value(v).data.dtype() == dtype;
}

// How one node is converted.
enum class Action {
  kFloat,        // stays float
  kWeighted,     // QConv / QGemm / QMatMul: int8 activation, s8 weight, s32 or f32 bias
  kBinary,       // QAdd / QMul
  kUnary,        // QAveragePool, QGlobalAveragePool, QLookup: own output qparams
  kPassThrough,  // QMaxPool, QGlobalMaxPool, shape ops: output qparams = input's
  kClamp,        // Relu, Clip -> QClamp (bounds as attributes), output qparams = input's
  kDropout,      // -> Identity on int8
  kConcat,       // QConcat: own output qparams
};

struct Plan {
  Action action = Action::kFloat;
  std::string op_type;  // of the converted node
  std::string domain;   // of the converted node
  std::string reason;   // kFloat: why
};

Plan KeepFloat(std::string reason) { return Plan{Action::kFloat, "", "", std::move(reason)}; }

// The conversion the op table declares for int8 operator `op`.
Plan Int8(Int8Op op) {
  Action action = Action::kFloat;
  switch (Int8OpInfoOf(op).convert) {
    case ConvertForm::kWeighted: action = Action::kWeighted; break;
    case ConvertForm::kBinary: action = Action::kBinary; break;
    case ConvertForm::kUnary: action = Action::kUnary; break;
    case ConvertForm::kShared: action = Action::kPassThrough; break;
    case ConvertForm::kClamp: action = Action::kClamp; break;
    case ConvertForm::kConcat: action = Action::kConcat; break;
    case ConvertForm::kUnset:
    case ConvertForm::kInserted:
    case ConvertForm::kDynamic: return KeepFloat(fmt::format("{} is not made by Convert", Int8OpName(op)));
  }
  return Plan{action, std::string(Int8OpName(op)), std::string(kInt8Domain), ""};
}

// The int8 operator the op table makes of float node `n`, or why it stays float.
Plan Int8Of(const Node& n) {
  const std::optional<Int8Op> op = Int8OpFrom(n.op_type, /*dynamic=*/false);
  if (!op) return KeepFloat(fmt::format("{} has no int8 operator", n.op_type));
  return Int8(*op);
}

// The form in which a converted node takes input `slot`.
enum class Form { kInt8, kFloat, kUnused };
Form InputForm(const Plan& plan, size_t slot, bool float_bias) {
  switch (plan.action) {
    case Action::kFloat:
      return Form::kFloat;
    case Action::kWeighted:
      if (slot == 2) return float_bias ? Form::kFloat : Form::kInt8;
      return slot < 2 ? Form::kInt8 : Form::kUnused;
    case Action::kBinary:
    case Action::kConcat:
      return Form::kInt8;
    case Action::kClamp:
    case Action::kDropout:
      return slot == 0 ? Form::kInt8 : Form::kUnused;
    case Action::kUnary:
    case Action::kPassThrough:
      return slot == 0 ? Form::kInt8 : Form::kFloat;
  }
  return Form::kFloat;
}

// Clip's bounds: attributes (opset < 11) or constant inputs 1 and 2; nullopt where absent. Fails when a bound is
// computed at run time.
struct ClipBounds {
  std::optional<float> min, max;
};
Result<ClipBounds> ReadClipBounds(const Graph& g, const Node& n) {
  ClipBounds b;
  for (int k = 0; k < 2; ++k) {
    std::optional<float>& bound = k == 0 ? b.min : b.max;
    const char* name = k == 0 ? "min" : "max";
    if (const Attribute* a = n.attributes.Find(name); a != nullptr && a->type() == AttrType::kFloat) bound = a->f();
    const size_t slot = static_cast<size_t>(k) + 1;
    if (n.inputs.size() <= slot || n.inputs[slot] == kNoValue) continue;
    const ValueId v = n.inputs[slot];
    if (!IsConstant(g, v, DType::kF32) || g.value(v).data.NumElements() != 1) {
      return InvalidArgument("its {} bound '{}' is not a constant f32 scalar", name, g.value(v).name);
    }
    bound = g.value(v).data.data<float>()[0];
  }
  return b;
}

Plan PlanWeighted(const Graph& g, const Node& n) {
  const std::string_view op = n.op_type;
  const Shape& w = g.value(n.inputs[1]).data.shape();
  int64_t out_channels = 0;
  if (op == FloatOpName(FloatOp::kConv)) {
    if (w.rank() != 4) return KeepFloat(fmt::format("QConv runs 2-D convolutions; the weight is {}", w));
    out_channels = w.dim(0);
  } else if (op == FloatOpName(FloatOp::kGemm)) {
    if (w.rank() != 2) return KeepFloat(fmt::format("Gemm weight {} is not 2-D", w));
    auto trans_a = n.attributes.GetInt("transA", 0);
    auto trans_b = n.attributes.GetInt("transB", 0);
    auto alpha = n.attributes.GetFloat("alpha", 1.0f);
    auto beta = n.attributes.GetFloat("beta", 1.0f);
    if (!trans_a.ok() || !trans_b.ok() || !alpha.ok() || !beta.ok()) return KeepFloat("Gemm has mistyped attributes");
    if (*trans_a != 0 || *alpha != 1.0f || *beta != 1.0f) {
      return KeepFloat("QGemm needs transA = 0 and alpha = beta = 1");
    }
    out_channels = *trans_b != 0 ? w.dim(0) : w.dim(1);
  } else {  // MatMul
    if (w.rank() != 2) return KeepFloat(fmt::format("QMatMul needs a 2-D [K, N] weight; it is {}", w));
    out_channels = w.dim(1);
  }
  if (op != FloatOpName(FloatOp::kMatMul) && n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    const ValueId b = n.inputs[2];
    if (!IsConstant(g, b, DType::kF32) || g.value(b).data.shape() != Shape{out_channels}) {
      return KeepFloat(fmt::format("its bias '{}' is not a constant f32 of shape [{}]", g.value(b).name,
                                   out_channels));
    }
  }
  return Int8Of(n);
}

Plan PlanNode(const PreparedGraph& prepared, int index, const std::vector<int>& uses,
              const std::set<std::string>& keep_float) {
  const Graph& g = prepared.graph();
  const Node& n = g.node(index);
  const QuantOpInfo info = LookupQuantOp(n, WeightRank(g, n));
  const std::string_view op = n.op_type;
  if (info.kind == QuantOpKind::kFloat) {
    return KeepFloat(fmt::format("octet has no int8 operator for {}{}{}", n.domain, n.domain.empty() ? "" : ".",
                                 n.op_type));
  }
  const std::optional<QConfig>& qconfig = prepared.node_qconfig(index);
  if (!qconfig.has_value()) return KeepFloat("its QConfig is none");
  if (keep_float.count(n.name) > 0) return KeepFloat("kept float on request (--skip, keep_float)");
  if (qconfig->is_dynamic()) return KeepFloat("its QConfig is dynamic (QuantizeDynamic converts it, not Convert)");
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    const ValueId v = n.outputs[k];
    // Split's outputs are all int8.
    if (v != kNoValue && uses[static_cast<size_t>(v)] > 0 && op != FloatOpName(FloatOp::kSplit)) {
      return KeepFloat(fmt::format("its output '{}' is used and has no int8 form", g.value(v).name));
    }
  }
  for (int slot : info.activation_inputs) {
    const ValueId v = n.inputs[static_cast<size_t>(slot)];
    if (v != kNoValue && prepared.slot_of(v) < 0) {
      return KeepFloat(fmt::format("its input '{}' was not observed (not float data)", g.value(v).name));
    }
  }
  if (n.outputs.empty() || n.outputs[0] == kNoValue || prepared.slot_of(n.outputs[0]) < 0) {
    return KeepFloat("its output was not observed");
  }
  const std::string_view activation = FusedActivation(n);
  if (!activation.empty() && !IsFloatOp(activation, FloatOp::kRelu)) {
    return KeepFloat(fmt::format("the int8 operators fuse only Relu, not {}", activation));
  }
  switch (info.kind) {
    case QuantOpKind::kWeighted:
      return PlanWeighted(g, n);
    case QuantOpKind::kGeneral:
      // Two activations (a weight makes it kWeighted).
      if (op == FloatOpName(FloatOp::kMatMul)) return Int8(Int8Op::kQBatchMatMul);
      if (OpIn(op, {FloatOp::kSoftmax, FloatOp::kLayerNormalization})) {
        // The int8 kernels work over the last axis; the rank is not known here, so only axis -1 qualifies.
        auto axis = n.attributes.GetInt("axis", -1);
        if (!axis.ok() || *axis != -1) return KeepFloat("QLayerNorm and QSoftmax need axis -1");
        for (size_t k = 1; k < n.inputs.size(); ++k) {
          if (n.inputs[k] != kNoValue && !IsConstant(g, n.inputs[k], DType::kF32)) {
            return KeepFloat(fmt::format("its input '{}' is not a constant f32", g.value(n.inputs[k]).name));
          }
        }
      }
      return Int8Of(n);  // Add, Mul, the average pools, the lookups, Softmax, LayerNormalization
    case QuantOpKind::kShared:
      if (op == FloatOpName(FloatOp::kClip)) {
        if (auto bounds = ReadClipBounds(g, n); !bounds.ok()) return KeepFloat(bounds.status().message());
      }
      if (op == FloatOpName(FloatOp::kDropout)) {
        return Plan{Action::kDropout, std::string(FloatOpName(FloatOp::kIdentity)), "", ""};
      }
      if (Int8OpFrom(op, /*dynamic=*/false)) return Int8Of(n);     // max pools, Relu, Clip, Concat
      return Plan{Action::kPassThrough, n.op_type, n.domain, ""};  // shape ops run on int8 in ONNX's domain
    case QuantOpKind::kFloat:
      break;
  }
  return KeepFloat("not quantizable");
}

// Per value: it divides (a Div's input 1), directly or through Sqrt / Identity. A decomposed LayerNorm computes
// (x - mean) / Sqrt(var + eps); var + eps in int8 rounds to 0 on a zero-variance input (a silent audio frame), and
// 0 / 0 is NaN, so the nodes computing a divisor stay float.
std::vector<bool> DivisorValues(const Graph& g) {
  std::vector<bool> divisor(static_cast<size_t>(g.num_values()), false);
  for (int i = g.num_nodes() - 1; i >= 0; --i) {  // consumers before producers
    const Node& n = g.node(i);
    if (!n.domain.empty() || n.inputs.empty()) continue;
    if (n.op_type == FloatOpName(FloatOp::kDiv) && n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
      divisor[static_cast<size_t>(n.inputs[1])] = true;
    }
    if (OpIn(n.op_type, {FloatOp::kSqrt, FloatOp::kIdentity}) && n.inputs[0] != kNoValue && !n.outputs.empty() &&
        n.outputs[0] != kNoValue && divisor[static_cast<size_t>(n.outputs[0])]) {
      divisor[static_cast<size_t>(n.inputs[0])] = true;
    }
  }
  return divisor;
}

// `x` quantized with `q` (per tensor, or per channel along q.axis()), with the profile's rounding.
template <typename T>
void QuantizeConstantInto(const Tensor& x, const QParams& q, QuantizeRounding rounding, T* y) {
  const Shape& shape = x.shape();
  const int64_t channels = q.per_channel() ? shape.dim(q.axis()) : 1;
  const int64_t inner = q.per_channel() ? shape.Product(q.axis() + 1, shape.rank()) : 1;
  // PyTorch's zp + rne(x * (1 / s)), or TFLite's zp + round_half_away(x / s).
  const reference::QuantizeOpRounding op_rounding = rounding == QuantizeRounding::kHalfEvenMulReciprocal
                                                        ? reference::QuantizeOpRounding::kHalfEven
                                                        : reference::QuantizeOpRounding::kHalfAway;
  std::vector<float> inv(static_cast<size_t>(q.num_channels()));
  for (size_t c = 0; c < inv.size(); ++c) inv[c] = 1.0f / q.scales()[c];
  const float* xs = x.data<float>();
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const size_t c = q.per_channel() ? static_cast<size_t>((i / inner) % channels) : 0;
    const int32_t zp = q.zero_points()[c];
    y[i] = reference::QuantizeOpValue<T>(xs[i], q.scales()[c], inv[c], zp, q.quant_min(), q.quant_max(), op_rounding,
                                         /*nan_to_quant_min=*/false);
  }
}

Result<Tensor> QuantizeConstant(const Tensor& x, const QParams& q, QuantizeRounding rounding,
                                const std::string& name) {
  OCTET_RETURN_IF_ERROR(q.ValidateFor(x.shape(), name));
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(q.dtype(), x.shape()));
  switch (q.dtype()) {
    case DType::kU8:
      QuantizeConstantInto(x, q, rounding, y.data<uint8_t>());
      break;
    case DType::kS8:
      QuantizeConstantInto(x, q, rounding, y.data<int8_t>());
      break;
    default:
      return InvalidArgument("cannot quantize constant '{}' to {}", name, q.dtype());
  }
  return y;
}

class Converter {
 public:
  Converter(const PreparedGraph& prepared, const NumericsSpec& spec, std::map<std::string, QParams> qparams,
            const std::set<std::string>& keep_float)
      : prepared_(prepared),
        spec_(spec),
        qparams_(std::move(qparams)),
        keep_float_(keep_float),
        out_(prepared.graph().name()) {}

  Result<Graph> Run(ConvertReport* report);

 private:
  const Graph& in() const { return prepared_.graph(); }
  const Value& original(ValueId v) const { return in().value(v); }

  // Names: the original one where this form is the first to claim it, else a derived one unique in the graph.
  std::string ClaimOrDerive(ValueId v, const std::string& suffix);
  std::string DeriveValueName(const std::string& base);
  std::string DeriveNodeName(const std::string& base);

  Result<ValueId> NewValue(const std::string& name, DType dtype, std::optional<QParams> q);
  Result<ValueId> NewConstant(const std::string& name, Tensor data, std::optional<QParams> q);
  Result<ValueId> NewInt8Output(ValueId v, const QParams& q);
  Result<ValueId> NewFloatOutput(ValueId v);

  Result<QParams> Observed(ValueId v, const Node& consumer) const;
  Status CheckActivation(const Node& node, ValueId v, const QParams& q) const;
  // The qparams a quantized (non-shared) node reads input `v` with: the observed ones, re-expressed in the node's
  // activation dtype when its QConfig asks for another.
  Result<QParams> ConsumerQParams(int index, ValueId v);
  Result<QParams> WeightQParams(const Node& node, ValueId v) const;

  ValueId FindInt8(ValueId v, const QParams& q) const;
  Result<ValueId> FloatOf(ValueId v);
  Result<ValueId> Int8Of(ValueId v, const QParams& q);
  Result<ValueId> BiasOf(const Node& node, ValueId v, float a_scale, const QParams& wq);
  AttributeMap QuantizeAttributes() const;

  Status EmitFloat(const Node& n);
  Status EmitWeighted(int index, const Node& n, const Plan& plan);
  Status EmitBinary(int index, const Node& n, const Plan& plan);
  Status EmitUnary(int index, const Node& n, const Plan& plan);
  Status EmitPassThrough(const Node& n, const Plan& plan);
  Status EmitConcat(const Node& n, const Plan& plan);
  Status Emit(int index, const Node& n, const Plan& plan);

  const PreparedGraph& prepared_;
  NumericsSpec spec_;
  std::map<std::string, QParams> qparams_;
  const std::set<std::string>& keep_float_;
  Graph out_;
  std::set<std::string> value_names_;  // every original value name and every name given in out_
  std::set<std::string> node_names_;
  std::vector<bool> claimed_;       // by original value: its name is taken in out_
  std::vector<bool> float_use_;     // by original constant: some node takes it in f32
  std::vector<bool> graph_output_;  // by original value
  std::vector<bool> float_produced_;  // by original value: a graph input or the output of a float node
  std::vector<ValueId> float_;      // by original value: its f32 form in out_
  std::vector<std::vector<std::pair<QParams, ValueId>>> int8_;  // by original value: its integer forms
};

std::string Converter::DeriveValueName(const std::string& base) {
  std::string name = base;
  for (int i = 1; value_names_.count(name) != 0; ++i) name = fmt::format("{}_{}", base, i);
  value_names_.insert(name);
  return name;
}

std::string Converter::DeriveNodeName(const std::string& base) {
  std::string name = base;
  for (int i = 1; node_names_.count(name) != 0; ++i) name = fmt::format("{}_{}", base, i);
  node_names_.insert(name);
  return name;
}

std::string Converter::ClaimOrDerive(ValueId v, const std::string& suffix) {
  if (!claimed_[static_cast<size_t>(v)]) {
    claimed_[static_cast<size_t>(v)] = true;
    return original(v).name;
  }
  return DeriveValueName(original(v).name + suffix);
}

Result<ValueId> Converter::NewValue(const std::string& name, DType dtype, std::optional<QParams> q) {
  OCTET_ASSIGN_OR_RETURN(ValueId id, out_.AddNodeValue(name, dtype));
  out_.mutable_value(id).qparams = std::move(q);
  return id;
}

Result<ValueId> Converter::NewConstant(const std::string& name, Tensor data, std::optional<QParams> q) {
  OCTET_ASSIGN_OR_RETURN(ValueId id, out_.AddConstant(name, std::move(data)));
  out_.mutable_value(id).qparams = std::move(q);
  return id;
}

Result<ValueId> Converter::NewInt8Output(ValueId v, const QParams& q) {
  // A graph output's own name belongs to its f32 form (the Dequantize added at the end).
  const std::string name = graph_output_[static_cast<size_t>(v)] ? DeriveValueName(original(v).name + ".q")
                                                                  : ClaimOrDerive(v, ".q");
  OCTET_ASSIGN_OR_RETURN(ValueId id, NewValue(name, q.dtype(), q));
  int8_[static_cast<size_t>(v)].emplace_back(q, id);
  return id;
}

Result<ValueId> Converter::NewFloatOutput(ValueId v) {
  if (v == kNoValue) return kNoValue;
  OCTET_ASSIGN_OR_RETURN(ValueId id, NewValue(ClaimOrDerive(v, ".f32"), original(v).dtype, std::nullopt));
  float_[static_cast<size_t>(v)] = id;
  float_produced_[static_cast<size_t>(v)] = true;
  return id;
}

Result<QParams> Converter::Observed(ValueId v, const Node& consumer) const {
  auto it = qparams_.find(original(v).name);
  if (it == qparams_.end()) {
    return FailedPrecondition("failed to convert node '{}': value '{}' has no qparams (no observer watched it)",
                              consumer.name, original(v).name);
  }
  return it->second;
}

Status Converter::CheckActivation(const Node& node, ValueId v, const QParams& q) const {
  if ((q.dtype() != DType::kU8 && q.dtype() != DType::kS8) || q.per_channel()) {
    return InvalidArgument("failed to convert node '{}' ({}): activation '{}' needs per-tensor u8 or s8 qparams, "
                           "got {}",
                           node.name, node.op_type, original(v).name, q.ToString());
  }
  return OkStatus();
}

Result<QParams> Converter::ConsumerQParams(int index, ValueId v) {
  const Node& node = in().node(index);
  OCTET_ASSIGN_OR_RETURN(QParams own, Observed(v, node));
  OCTET_RETURN_IF_ERROR(CheckActivation(node, v, own));
  const QConfig& qconfig = *prepared_.node_qconfig(index);
  if (qconfig.activation.options.dtype == own.dtype()) return own;
  // Another dtype: the same real range [scale * (qmin - zp), scale * (qmax - zp)] in the consumer's format.
  auto observer = qconfig.activation.Make();
  if (!observer.ok()) {
    return InvalidArgument("failed to convert node '{}': activation observer: {}", node.name,
                           observer.status().message());
  }
  const QParamsSpec spec = (*observer)->options().Spec();
  const float lo = own.scale() * static_cast<float>(own.quant_min() - own.zero_point());
  const float hi = own.scale() * static_cast<float>(own.quant_max() - own.zero_point());
  auto q = CalculateQParamsFromRange(std::span<const float>(&lo, 1), std::span<const float>(&hi, 1), spec);
  if (!q.ok()) {
    return InvalidArgument("failed to convert node '{}': qparams of input '{}' as {}: {}", node.name,
                           original(v).name, DTypeName(spec.dtype), q.status().message());
  }
  OCTET_RETURN_IF_ERROR(CheckActivation(node, v, *q));
  return *q;
}

Result<QParams> Converter::WeightQParams(const Node& node, ValueId v) const {
  OCTET_ASSIGN_OR_RETURN(QParams q, Observed(v, node));
  if (q.dtype() != DType::kS8) {
    return InvalidArgument("failed to convert node '{}' ({}): weight '{}' must be quantized to s8, its observer "
                           "gives {}",
                           node.name, node.op_type, original(v).name, q.ToString());
  }
  if (!IsSymmetric(q.scheme()) || q.quant_min() >= spec_.symmetric_weight_quant_min) return q;
  // The profile's symmetric range is narrower (tflite: [-127, 127]): the same observed range over it.
  const Observer* observer = prepared_.FindObserver(original(v).name);
  if (observer == nullptr) return Internal("weight '{}' has qparams but no observer", original(v).name);
  QParamsSpec spec;
  spec.qscheme = q.scheme();
  spec.dtype = DType::kS8;
  spec.range = QuantRange{spec_.symmetric_weight_quant_min, q.quant_max(), true};
  spec.eps = observer->options().eps;
  spec.axis = q.axis();
  const std::vector<float> lo = observer->min_val(), hi = observer->max_val();
  auto derived = CalculateQParamsFromRange(lo, hi, spec);
  if (!derived.ok()) {
    return InvalidArgument("failed to convert node '{}': weight '{}' over [{}, {}]: {}", node.name,
                           original(v).name, spec.range.quant_min, spec.range.quant_max,
                           derived.status().message());
  }
  return *derived;
}

ValueId Converter::FindInt8(ValueId v, const QParams& q) const {
  for (const auto& [have, id] : int8_[static_cast<size_t>(v)]) {
    if (SameQParams(have, q)) return id;
  }
  return kNoValue;
}

AttributeMap Converter::QuantizeAttributes() const {
  AttributeMap a;
  if (spec_.quantize_rounding == QuantizeRounding::kHalfAwayDivide) a.Set("rounding", "half_away");
  if (spec_.non_finite == NonFiniteQuantize::kQuantMin) a.Set("non_finite", "quant_min");
  return a;
}

Result<ValueId> Converter::FloatOf(ValueId v) {
  if (v == kNoValue) return kNoValue;
  const size_t i = static_cast<size_t>(v);
  if (float_[i] != kNoValue) return float_[i];
  const Value& val = original(v);
  if (val.kind == ValueKind::kConstant) {
    OCTET_ASSIGN_OR_RETURN(float_[i], NewConstant(ClaimOrDerive(v, ".f32"), val.data, val.qparams));
    return float_[i];
  }
  if (int8_[i].empty()) return Internal("failed to convert: value '{}' is used before it is produced", val.name);
  // One Dequantize per value, shared by every float consumer.
  const ValueId src = int8_[i].front().second;
  OCTET_ASSIGN_OR_RETURN(ValueId y, NewValue(ClaimOrDerive(v, ".dq"), DType::kF32, std::nullopt));
  Node dq{DeriveNodeName(val.name + ".dequantize"),
          std::string(Int8OpName(Int8Op::kDequantize)),
          std::string(kInt8Domain),
          {},
          {src},
          {y}};
  OCTET_RETURN_IF_ERROR(out_.AddNode(std::move(dq)).status());
  float_[i] = y;
  return y;
}

Result<ValueId> Converter::Int8Of(ValueId v, const QParams& q) {
  if (ValueId id = FindInt8(v, q); id != kNoValue) return id;
  const size_t i = static_cast<size_t>(v);
  const Value& val = original(v);
  ValueId id = kNoValue;
  if (val.kind == ValueKind::kConstant) {  // folded now: no Quantize node for constants
    if (val.data.dtype() != DType::kF32) {
      return InvalidArgument("failed to convert: constant '{}' is {}, only f32 constants can be quantized",
                             val.name, val.data.dtype());
    }
    OCTET_ASSIGN_OR_RETURN(Tensor data, QuantizeConstant(val.data, q, spec_.quantize_rounding, val.name));
    const std::string name = float_use_[i] ? DeriveValueName(val.name + ".q") : ClaimOrDerive(v, ".q");
    OCTET_ASSIGN_OR_RETURN(id, NewConstant(name, std::move(data), q));
  } else if (!float_produced_[i]) {  // produced in int8 with other qparams
    if (int8_[i].empty()) return Internal("failed to convert: value '{}' is used before it is produced", val.name);
    const ValueId src = int8_[i].front().second;
    OCTET_ASSIGN_OR_RETURN(id, NewValue(DeriveValueName(val.name + ".rq"), q.dtype(), q));
    Node rq{DeriveNodeName(val.name + ".requantize"),
            std::string(Int8OpName(Int8Op::kRequantize)),
            std::string(kInt8Domain),
            {},
            {src},
            {id}};
    OCTET_RETURN_IF_ERROR(out_.AddNode(std::move(rq)).status());
  } else {  // a graph input or the output of a float node: quantized straight from float
    OCTET_ASSIGN_OR_RETURN(ValueId src, FloatOf(v));
    OCTET_ASSIGN_OR_RETURN(id, NewValue(DeriveValueName(val.name + ".q"), q.dtype(), q));
    Node qn{DeriveNodeName(val.name + ".quantize"),
            std::string(Int8OpName(Int8Op::kQuantize)),
            std::string(kInt8Domain),
            QuantizeAttributes(),
            {src},
            {id}};
    OCTET_RETURN_IF_ERROR(out_.AddNode(std::move(qn)).status());
  }
  int8_[i].emplace_back(q, id);
  return id;
}

Result<ValueId> Converter::BiasOf(const Node& node, ValueId v, float a_scale, const QParams& wq) {
  const Tensor& b = original(v).data;
  const size_t n = static_cast<size_t>(b.NumElements());
  std::vector<float> scales(wq.per_channel() ? n : 1);
  std::vector<int32_t> values(n);
  for (size_t c = 0; c < n; ++c) {
    const float w_scale = wq.per_channel() ? wq.scales()[c] : wq.scale();
    values[c] = reference::QuantizeBias(b.data<float>()[c], a_scale, w_scale);
    if (c < scales.size()) scales[c] = a_scale * w_scale;
  }
  auto q = QParams::Create(wq.per_channel() ? QScheme::kPerChannelSymmetric : QScheme::kPerTensorSymmetric,
                           DType::kS32, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                           std::move(scales), std::vector<int32_t>(wq.per_channel() ? n : 1, 0), 0);
  if (!q.ok()) {
    return InvalidArgument("failed to convert node '{}': bias '{}': {}", node.name, original(v).name,
                           q.status().message());
  }
  if (ValueId id = FindInt8(v, *q); id != kNoValue) return id;
  OCTET_ASSIGN_OR_RETURN(Tensor data, Tensor::FromValues<int32_t>(b.shape(), values));
  const size_t i = static_cast<size_t>(v);
  const std::string name = float_use_[i] ? DeriveValueName(original(v).name + ".q") : ClaimOrDerive(v, ".q");
  OCTET_ASSIGN_OR_RETURN(ValueId id, NewConstant(name, std::move(data), *q));
  int8_[i].emplace_back(*q, id);
  return id;
}

Status Converter::EmitFloat(const Node& n) {
  Node f = n;
  for (ValueId& v : f.inputs) {
    OCTET_ASSIGN_OR_RETURN(v, FloatOf(v));
  }
  for (ValueId& v : f.outputs) {
    OCTET_ASSIGN_OR_RETURN(v, NewFloatOutput(v));
  }
  return out_.AddNode(std::move(f)).status();
}

Status Converter::EmitWeighted(int index, const Node& n, const Plan& plan) {
  OCTET_ASSIGN_OR_RETURN(QParams xq, ConsumerQParams(index, n.inputs[0]));
  OCTET_ASSIGN_OR_RETURN(ValueId x, Int8Of(n.inputs[0], xq));
  OCTET_ASSIGN_OR_RETURN(QParams wq, WeightQParams(n, n.inputs[1]));
  OCTET_ASSIGN_OR_RETURN(ValueId w, Int8Of(n.inputs[1], wq));
  std::vector<ValueId> inputs = {x, w};
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    ValueId b = kNoValue;
    if (spec_.float_bias) {
      OCTET_ASSIGN_OR_RETURN(b, FloatOf(n.inputs[2]));
    } else {
      OCTET_ASSIGN_OR_RETURN(b, BiasOf(n, n.inputs[2], xq.scale(), wq));
    }
    inputs.push_back(b);
  }
  OCTET_ASSIGN_OR_RETURN(QParams yq, Observed(n.outputs[0], n));
  OCTET_RETURN_IF_ERROR(CheckActivation(n, n.outputs[0], yq));
  OCTET_ASSIGN_OR_RETURN(ValueId y, NewInt8Output(n.outputs[0], yq));
  Node q{n.name, plan.op_type, plan.domain, n.attributes, std::move(inputs), {y}};
  q.attributes.Erase(kActivationAttribute);
  if (IsFloatOp(FusedActivation(n), FloatOp::kRelu)) {
    q.attributes.Set(kActivationAttribute, std::string(FloatOpName(FloatOp::kRelu)));
  }
  q.attributes.Set("requantization", reference::QGemmStageName(spec_.requantization));
  return out_.AddNode(std::move(q)).status();
}

Status Converter::EmitBinary(int index, const Node& n, const Plan& plan) {
  std::vector<ValueId> inputs;
  for (ValueId v : n.inputs) {
    OCTET_ASSIGN_OR_RETURN(QParams q, ConsumerQParams(index, v));
    OCTET_ASSIGN_OR_RETURN(ValueId id, Int8Of(v, q));
    inputs.push_back(id);
  }
  OCTET_ASSIGN_OR_RETURN(QParams yq, Observed(n.outputs[0], n));
  OCTET_RETURN_IF_ERROR(CheckActivation(n, n.outputs[0], yq));
  OCTET_ASSIGN_OR_RETURN(ValueId y, NewInt8Output(n.outputs[0], yq));
  Node q{n.name, plan.op_type, plan.domain, {}, std::move(inputs), {y}};
  if (IsFloatOp(FusedActivation(n), FloatOp::kRelu)) {
    q.attributes.Set(kActivationAttribute, std::string(FloatOpName(FloatOp::kRelu)));
  }
  return out_.AddNode(std::move(q)).status();
}

Status Converter::EmitUnary(int index, const Node& n, const Plan& plan) {
  OCTET_ASSIGN_OR_RETURN(QParams xq, ConsumerQParams(index, n.inputs[0]));
  std::vector<ValueId> inputs;
  OCTET_ASSIGN_OR_RETURN(ValueId x, Int8Of(n.inputs[0], xq));
  inputs.push_back(x);
  for (size_t k = 1; k < n.inputs.size(); ++k) {
    OCTET_ASSIGN_OR_RETURN(ValueId v, FloatOf(n.inputs[k]));
    inputs.push_back(v);
  }
  OCTET_ASSIGN_OR_RETURN(QParams yq, Observed(n.outputs[0], n));
  OCTET_RETURN_IF_ERROR(CheckActivation(n, n.outputs[0], yq));
  OCTET_ASSIGN_OR_RETURN(ValueId y, NewInt8Output(n.outputs[0], yq));
  Node q{n.name, plan.op_type, plan.domain, n.attributes, std::move(inputs), {y}};
  if (plan.op_type == Int8OpName(Int8Op::kQLookup)) q.attributes.Set("function", n.op_type);
  return out_.AddNode(std::move(q)).status();
}

// The output keeps the input's qparams (Prepare gave both one observer): max pools, clamps and shape ops move
// integers without rescaling them.
Status Converter::EmitPassThrough(const Node& n, const Plan& plan) {
  OCTET_ASSIGN_OR_RETURN(QParams xq, Observed(n.inputs[0], n));
  OCTET_RETURN_IF_ERROR(CheckActivation(n, n.inputs[0], xq));
  OCTET_ASSIGN_OR_RETURN(ValueId x, Int8Of(n.inputs[0], xq));
  std::vector<ValueId> inputs = {x};
  AttributeMap attributes = n.attributes;
  if (plan.action == Action::kPassThrough) {
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      OCTET_ASSIGN_OR_RETURN(ValueId v, FloatOf(n.inputs[k]));
      inputs.push_back(v);
    }
  } else if (plan.action == Action::kClamp) {
    attributes = {};
    if (n.op_type == FloatOpName(FloatOp::kRelu)) {
      attributes.Set("min", 0.0f);
    } else {
      auto bounds = ReadClipBounds(in(), n);
      if (!bounds.ok()) return bounds.status().WithContext(fmt::format("failed to convert node '{}'", n.name));
      if (bounds->min) attributes.Set("min", *bounds->min);
      if (bounds->max) attributes.Set("max", *bounds->max);
    }
  } else {  // Dropout at inference
    attributes = {};
  }
  std::vector<ValueId> outputs;  // several for Split, all with x's qparams
  for (ValueId v : n.outputs) {
    ValueId y = kNoValue;
    if (v != kNoValue) {
      OCTET_ASSIGN_OR_RETURN(y, NewInt8Output(v, xq));
    }
    outputs.push_back(y);
  }
  Node q{n.name, plan.op_type, plan.domain, std::move(attributes), std::move(inputs), std::move(outputs)};
  return out_.AddNode(std::move(q)).status();
}

Status Converter::EmitConcat(const Node& n, const Plan& plan) {
  std::vector<ValueId> inputs;
  for (ValueId v : n.inputs) {
    OCTET_ASSIGN_OR_RETURN(QParams q, Observed(v, n));
    OCTET_RETURN_IF_ERROR(CheckActivation(n, v, q));
    OCTET_ASSIGN_OR_RETURN(ValueId id, Int8Of(v, q));
    inputs.push_back(id);
  }
  OCTET_ASSIGN_OR_RETURN(QParams yq, Observed(n.outputs[0], n));
  OCTET_RETURN_IF_ERROR(CheckActivation(n, n.outputs[0], yq));
  OCTET_ASSIGN_OR_RETURN(ValueId y, NewInt8Output(n.outputs[0], yq));
  Node q{n.name, plan.op_type, plan.domain, n.attributes, std::move(inputs), {y}};
  return out_.AddNode(std::move(q)).status();
}

Status Converter::Emit(int index, const Node& n, const Plan& plan) {
  switch (plan.action) {
    case Action::kFloat:
      return EmitFloat(n);
    case Action::kWeighted:
      return EmitWeighted(index, n, plan);
    case Action::kBinary:
      return EmitBinary(index, n, plan);
    case Action::kUnary:
      return EmitUnary(index, n, plan);
    case Action::kPassThrough:
    case Action::kClamp:
    case Action::kDropout:
      return EmitPassThrough(n, plan);
    case Action::kConcat:
      return EmitConcat(n, plan);
  }
  return Internal("unknown conversion");
}

Result<Graph> Converter::Run(ConvertReport* report) {
  const Graph& g = in();
  const size_t num_values = static_cast<size_t>(g.num_values());
  for (const Value& v : g.values()) value_names_.insert(v.name);
  for (const Node& n : g.nodes()) node_names_.insert(n.name);
  claimed_.assign(num_values, false);
  float_use_.assign(num_values, false);
  graph_output_.assign(num_values, false);
  float_produced_.assign(num_values, false);
  float_.assign(num_values, kNoValue);
  int8_.assign(num_values, {});

  const std::vector<int> uses = CountUses(g);
  const std::vector<int> producers = g.Producers();
  const std::vector<bool> divisor = DivisorValues(g);
  // By original value: the output of a node the user keeps float (keep_float, a none QConfig: --skip), or of a
  // shape op fed by one. Shape ops pass such a value on in float, so it is quantized only by the next node that
  // computes in int8, not requantized in front of every Reshape.
  std::vector<bool> user_float(num_values, false);
  std::vector<Plan> plans;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    plans.push_back(PlanNode(prepared_, i, uses, keep_float_));
    Plan& plan = plans.back();
    if (plan.action != Action::kFloat && !n.outputs.empty() && n.outputs[0] != kNoValue &&
        divisor[static_cast<size_t>(n.outputs[0])]) {
      plan = KeepFloat(fmt::format("its output '{}' is a divisor (a Div's input 1, maybe through Sqrt): int8 could "
                                   "round a small positive value such as var + eps to 0 and divide by zero",
                                   g.value(n.outputs[0]).name));
    }
    bool mark =
        plan.action == Action::kFloat && (keep_float_.count(n.name) > 0 || !prepared_.node_qconfig(i).has_value());
    const bool shape_op = plan.action == Action::kDropout ||
                          (plan.action == Action::kPassThrough && plan.domain.empty());  // not QMaxPool & co.
    if (shape_op && !n.inputs.empty() && n.inputs[0] != kNoValue && user_float[static_cast<size_t>(n.inputs[0])]) {
      const int p = producers[static_cast<size_t>(n.inputs[0])];
      plan = KeepFloat(fmt::format("its input comes from '{}', which stays float; shape ops pass it on in float",
                                   p >= 0 ? g.node(p).name : g.value(n.inputs[0]).name));
      mark = true;
    }
    if (mark) {
      for (ValueId v : n.outputs) {
        if (v != kNoValue) user_float[static_cast<size_t>(v)] = true;
      }
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != kNoValue && InputForm(plans.back(), k, spec_.float_bias) == Form::kFloat) {
        float_use_[static_cast<size_t>(n.inputs[k])] = true;
      }
    }
  }
  for (ValueId v : g.outputs()) float_use_[static_cast<size_t>(v)] = graph_output_[static_cast<size_t>(v)] = true;

  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    OCTET_ASSIGN_OR_RETURN(ValueId id, out_.AddInput(val.name, val.dtype, val.shape.value_or(Shape{})));
    claimed_[static_cast<size_t>(v)] = true;
    float_[static_cast<size_t>(v)] = id;
    float_produced_[static_cast<size_t>(v)] = true;
  }
  for (int i = 0; i < g.num_nodes(); ++i) {
    OCTET_RETURN_IF_ERROR(Emit(i, g.node(i), plans[static_cast<size_t>(i)]));
  }
  for (ValueId v : g.outputs()) {
    OCTET_ASSIGN_OR_RETURN(ValueId id, FloatOf(v));
    OCTET_RETURN_IF_ERROR(out_.AddOutput(id));
  }
  OCTET_RETURN_IF_ERROR(VerifyGraph(out_).WithContext("failed to convert"));
  if (report != nullptr) {
    *report = {};
    for (int i = 0; i < g.num_nodes(); ++i) {
      const Plan& p = plans[static_cast<size_t>(i)];
      if (p.action == Action::kFloat) {
        report->kept_float.push_back({g.node(i).name, g.node(i).op_type, p.reason});
      } else {
        report->quantized.push_back(g.node(i).name);
      }
    }
  }
  return std::move(out_);
}

}  // namespace

Result<Graph> Convert(const PreparedGraph& prepared, const ConvertOptions& options, ConvertReport* report) {
  auto qparams = prepared.CalculateQParams();
  if (!qparams.ok()) {
    return Status(qparams.status().code(), fmt::format("failed to convert graph '{}': {}", prepared.graph().name(),
                                                       qparams.status().message()));
  }
  for (const std::string& name : options.keep_float) {
    bool found = false;
    for (const Node& n : prepared.graph().nodes()) found = found || n.name == name;
    if (!found) {
      return InvalidArgument("failed to convert graph '{}': the nodes to keep float (--skip, keep_float) name '{}', "
                             "which is no node of the prepared graph",
                             prepared.graph().name(), name);
    }
  }
  Converter converter(prepared, GetNumericsSpec(options.profile), std::move(*qparams), options.keep_float);
  OCTET_ASSIGN_OR_RETURN(Graph converted, converter.Run(report));
  if (options.fuse_activations) OCTET_RETURN_IF_ERROR(FuseInt8Activations(converted).status());
  return converted;
}

}  // namespace octet
