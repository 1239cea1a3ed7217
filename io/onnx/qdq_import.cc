// QDQ group recognition at import (see qdq_import.h): qparams onto integer values, Q/DQ onto octet's Quantize /
// Dequantize, then each float operator between them onto its int8 operator (core/op_table.h).
#include "io/onnx/qdq_import.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "core/op_table.h"
#include "core/verifier.h"
#include "io/onnx/onnx_op_names.h"
#include "io/onnx/qdq_import_dense_stem.h"
#include "quant/fuse_transformer.h"

namespace octet {
namespace {

using onnx_names::IsOpType;

constexpr FloatOp kQ = FloatOp::kQuantizeLinear;
constexpr FloatOp kDq = FloatOp::kDequantizeLinear;

bool IsOnnxOp(const Node& n, FloatOp op) { return IsFloatOp(n, op); }

bool IsShapeOnly(const Node& n) {
  using F = FloatOp;
  return IsOnnxOp(n, F::kReshape) || IsOnnxOp(n, F::kFlatten) || IsOnnxOp(n, F::kSqueeze) ||
         IsOnnxOp(n, F::kUnsqueeze) || IsOnnxOp(n, F::kTranspose) || IsOnnxOp(n, F::kIdentity);
}

// Ops that move codes unchanged into every output (Split: attention's q, k, v), so their outputs carry the input's
// qparams; unlike IsShapeOnly ops they are not rewritten from DQ -> op -> Q groups (several outputs).
bool MovesCodes(const Node& n) { return IsShapeOnly(n) || IsOnnxOp(n, FloatOp::kSplit); }

bool SameQParams(const QParams& a, const QParams& b) {
  return a.dtype() == b.dtype() && a.per_channel() == b.per_channel() && a.axis() == b.axis() &&
         a.scales() == b.scales() && a.zero_points() == b.zero_points() && a.quant_min() == b.quant_min() &&
         a.quant_max() == b.quant_max();
}

bool Is8BitPerTensor(const std::optional<QParams>& q) {
  return q.has_value() && !q->per_channel() && (q->dtype() == DType::kU8 || q->dtype() == DType::kS8);
}

int32_t IntElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kU8: return t.data<uint8_t>()[i];
    case DType::kS8: return t.data<int8_t>()[i];
    case DType::kS32: return t.data<int32_t>()[i];
    case DType::kF32: break;
  }
  return 0;
}

class Recognizer {
 public:
  explicit Recognizer(Graph& g) : g_(g) {}

  Result<QdqImportReport> Run() {
    bool any = false;
    for (const Node& n : g_.nodes()) any = any || IsOnnxOp(n, kQ) || IsOnnxOp(n, kDq);
    if (!any) return QdqImportReport{};
    Index();
    FoldConstantInputs();
    Index();
    BypassNoOpCasts();
    OCTET_RETURN_IF_ERROR(FuseLayerNorms(g_).status());
    OCTET_RETURN_IF_ERROR(FuseGelus(g_).status());
    Index();
    AssignQParams();
    PropagateThroughShapeOps();
    ConvertBoundaries();
    Index();
    AbsorbCodeClips();
    PropagateThroughShapeOps();  // to shape ops after an integer Clip, whose output has qparams only now
    // A range narrowed by such a Clip carried through shape ops before the groups are made (the dense stem's
    // Reshape and Transpose before a MaxPool, whose output takes its input's range).
    SyncShapeOpRanges();
    Index();
    AbsorbRangeClips();
    NarrowCodesBeforeMaxPools(g_);  // octet's export moves a 7-bit Clip after the MaxPool reading the codes
    Index();
    for (int i = 0; i < g_.num_nodes(); ++i) {
      if (dead_[static_cast<size_t>(i)]) continue;
      OCTET_RETURN_IF_ERROR(TryGroup(i));
    }
    OCTET_RETURN_IF_ERROR(RemoveDeadNodes());  // first, so that a value's dead Dequantize readers do not count
    FuseClamps();
    InferZeroPointRelus();
    OCTET_RETURN_IF_ERROR(RemoveDeadNodes());
    SyncShapeOpRanges();
    g_ = g_.WithoutUnusedConstants();
    OCTET_RETURN_IF_ERROR(g_.SortTopologically());
    OCTET_RETURN_IF_ERROR(VerifyGraph(g_));
    return std::move(report_);
  }

 private:
  void Index() {
    const size_t nv = static_cast<size_t>(g_.num_values());
    producer_ = g_.Producers();
    consumers_.assign(nv, {});
    graph_output_.assign(nv, false);
    for (ValueId v : g_.outputs()) graph_output_[static_cast<size_t>(v)] = true;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      for (ValueId v : g_.node(i).inputs) {
        if (v != kNoValue) consumers_[static_cast<size_t>(v)].push_back(i);
      }
    }
    dead_.assign(static_cast<size_t>(g_.num_nodes()), false);
  }

  static bool IsConstantMaker(const Node& n) {
    return IsOnnxOp(n, FloatOp::kConstant) || IsOnnxOp(n, FloatOp::kConstantOfShape) || IsOnnxOp(n, FloatOp::kIdentity);
  }

  // The data of a value computed from constants only by Constant, ConstantOfShape, Cast and Identity nodes (how
  // PyTorch 1.13's exporter writes scales, zero points, weights and biases), or nullopt.
  std::optional<Tensor> Fold(ValueId v, int depth = 0) const {
    if (v == kNoValue || depth > 8) return std::nullopt;
    const Value& val = g_.value(v);
    if (val.kind == ValueKind::kConstant) return val.data;
    const int p = val.kind == ValueKind::kNode ? producer_[static_cast<size_t>(v)] : -1;
    if (p < 0) return std::nullopt;
    const Node& n = g_.node(p);
    if (n.outputs.size() != 1 || !n.domain.empty()) return std::nullopt;
    if (IsOpType(n.op_type, FloatOp::kConstant)) {
      Result<Tensor> t = n.attributes.GetTensor("value");
      if (!t.ok()) return std::nullopt;
      return *t;
    }
    if (n.inputs.size() != 1) return std::nullopt;
    std::optional<Tensor> in = Fold(n.inputs[0], depth + 1);
    if (!in) return std::nullopt;
    if (IsOpType(n.op_type, FloatOp::kIdentity)) return in;
    if (IsOpType(n.op_type, FloatOp::kCast)) {
      const Result<int64_t> to = n.attributes.GetInt("to");
      if (!to.ok()) return std::nullopt;
      // ONNX TensorProto codes: 1 float, 2 uint8, 3 int8, 6 int32, 7 int64 (held as int32).
      const DType d = *to == 1 ? DType::kF32 : *to == 2 ? DType::kU8 : *to == 3 ? DType::kS8 : DType::kS32;
      if (*to != 1 && *to != 2 && *to != 3 && *to != 6 && *to != 7) return std::nullopt;
      return CastTensor(*in, d);
    }
    if (IsOpType(n.op_type, FloatOp::kConstantOfShape)) {
      if (in->dtype() != DType::kS32 || in->shape().rank() != 1) return std::nullopt;
      const std::span<const int32_t> dims = in->values<int32_t>();
      Tensor fill = Tensor::FromValues<float>(Shape{1}, std::vector<float>{0.0f}).value();
      if (const Attribute* a = n.attributes.Find("value"); a != nullptr) {
        if (a->type() != AttrType::kTensor || a->t().NumElements() != 1) return std::nullopt;
        fill = a->t();
      }
      Result<Tensor> out = Tensor::Create(fill.dtype(), Shape(std::vector<int64_t>(dims.begin(), dims.end())));
      if (!out.ok() || out->NumElements() > (int64_t{1} << 24)) return std::nullopt;
      const size_t size = DTypeSize(fill.dtype());
      for (int64_t i = 0; i < out->NumElements(); ++i) {
        std::memcpy(static_cast<std::byte*>(out->raw_data()) + i * static_cast<int64_t>(size), fill.raw_data(), size);
      }
      return *out;
    }
    return std::nullopt;
  }

  // `t` converted to `d` when every value is exactly representable (the zero points and biases folded here are),
  // else nullopt.
  static std::optional<Tensor> CastTensor(const Tensor& t, DType d) {
    Result<Tensor> out = Tensor::Create(d, t.shape());
    if (!out.ok()) return std::nullopt;
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      const double v = t.dtype() == DType::kF32 ? static_cast<double>(t.data<float>()[i]) : IntElement(t, i);
      if (d == DType::kF32) {
        out->data<float>()[i] = static_cast<float>(v);
        continue;
      }
      if (v != std::trunc(v) || v < DTypeMin(d) || v > DTypeMax(d)) return std::nullopt;
      switch (d) {
        case DType::kU8: out->data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
        case DType::kS8: out->data<int8_t>()[i] = static_cast<int8_t>(v); break;
        case DType::kS32: out->data<int32_t>()[i] = static_cast<int32_t>(v); break;
        case DType::kF32: break;
      }
    }
    return *out;
  }

  // The inputs of Q/DQ/QLinear nodes that Fold computes (scales, zero points, weights, biases) become constants;
  // the nodes that made them are dropped once nothing reads them.
  void FoldConstantInputs() {
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      if (!IsOnnxOp(n, kQ) && !IsOnnxOp(n, kDq) && !IsOnnxOp(n, FloatOp::kQLinearConv) &&
          !IsOnnxOp(n, FloatOp::kQLinearMatMul)) {
        continue;
      }
      for (size_t k = IsOnnxOp(n, kQ) ? 1 : 0; k < n.inputs.size(); ++k) {
        const ValueId v = g_.node(i).inputs[k];
        if (v == kNoValue || g_.value(v).kind != ValueKind::kNode) continue;
        std::optional<Tensor> t = Fold(v);
        if (!t) continue;
        std::string name = g_.value(v).name + ".folded";
        while (g_.FindValue(name) != kNoValue) name += "_";
        Result<ValueId> c = g_.AddConstant(name, std::move(*t));
        if (c.ok()) g_.mutable_node(i).inputs[k] = *c;
      }
    }
  }

  // PyTorch 1.13's exporter follows each QuantizeLinear with a Cast to the same 8-bit type: its readers read the
  // QuantizeLinear's output instead.
  void BypassNoOpCasts() {
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      if (!IsOnnxOp(n, FloatOp::kCast) || n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0] == kNoValue ||
          graph_output_[static_cast<size_t>(n.outputs[0])]) {
        continue;
      }
      const int p = n.inputs[0] == kNoValue ? -1 : producer_[static_cast<size_t>(n.inputs[0])];
      if (p < 0 || !IsOnnxOp(g_.node(p), kQ)) continue;
      const Node& q = g_.node(p);
      const Value* z = q.inputs.size() > 2 && q.inputs[2] != kNoValue ? &g_.value(q.inputs[2]) : nullptr;
      const DType qd = z != nullptr && z->kind == ValueKind::kConstant ? z->dtype : DType::kU8;
      const Result<int64_t> to = n.attributes.GetInt("to");
      if (!to.ok() || !((qd == DType::kU8 && *to == 2) || (qd == DType::kS8 && *to == 3))) continue;
      const ValueId from = n.outputs[0], to_value = n.inputs[0];
      for (int r : consumers_[static_cast<size_t>(from)]) {
        for (ValueId& in : g_.mutable_node(r).inputs) {
          if (in == from) in = to_value;
        }
      }
      dead_[static_cast<size_t>(i)] = true;
    }
    Compact();
  }

  // Where a node states an integer value's qparams: the value, the slots of its scale and zero point, and the axis
  // of a 1-D scale (Q/DQ: their `axis` attribute).
  struct QParamSource {
    ValueId value;
    size_t scale_slot, zp_slot;
    int axis;
  };

  // The qparams a node states: QuantizeLinear of its output, DequantizeLinear of its input, QLinearConv and
  // QLinearMatMul of x / a, of the weight (per output channel: QLinearConv's axis 0, QLinearMatMul's columns) and of y.
  std::vector<QParamSource> Sources(const Node& n) const {
    auto in = [&](size_t k) { return n.inputs.size() > k ? n.inputs[k] : kNoValue; };
    const ValueId out = n.outputs.empty() ? kNoValue : n.outputs[0];
    std::vector<QParamSource> s;
    if (IsOnnxOp(n, kQ) || IsOnnxOp(n, kDq)) {
      const Attribute* a = n.attributes.Find("axis");
      const int axis = a != nullptr && a->type() == AttrType::kInt ? static_cast<int>(a->i()) : 1;
      s.push_back({IsOnnxOp(n, kQ) ? out : in(0), 1, 2, axis});
    } else if (IsOnnxOp(n, FloatOp::kQLinearConv) || IsOnnxOp(n, FloatOp::kQLinearMatMul)) {
      s = {{in(0), 1, 2, 0}, {in(3), 4, 5, IsOnnxOp(n, FloatOp::kQLinearConv) ? 0 : 1}, {out, 6, 7, 0}};
    }
    s.erase(std::remove_if(s.begin(), s.end(), [](const QParamSource& q) { return q.value == kNoValue; }), s.end());
    return s;
  }

  // The integer dtype a source works in: its zero point's, else its integer tensor's when known, else u8
  // (QuantizeLinear's default; opset 21's output_dtype 3 asks for s8).
  DType IntDType(const Node& n, const QParamSource& src) const {
    if (n.inputs.size() > src.zp_slot && n.inputs[src.zp_slot] != kNoValue) {
      const Value& z = g_.value(n.inputs[src.zp_slot]);
      if (z.kind != ValueKind::kNode) return z.dtype;
    }
    if (g_.value(src.value).kind != ValueKind::kNode) return g_.value(src.value).dtype;
    if (IsOnnxOp(n, kQ)) {
      const Attribute* od = n.attributes.Find("output_dtype");
      if (od != nullptr && od->type() == AttrType::kInt && od->i() == 3) return DType::kS8;
    }
    return DType::kU8;
  }

  // The qparams a node states for a value, from its constant scale and zero point, or nullopt with `why`.
  std::optional<QParams> ConstQParams(const Node& n, const QParamSource& src, std::string& why) const {
    const ValueId int_value = src.value;
    if (n.inputs.size() <= src.scale_slot || n.inputs[src.scale_slot] == kNoValue) {
      return why = "it has no scale", std::nullopt;
    }
    const Value& s = g_.value(n.inputs[src.scale_slot]);
    if (s.kind != ValueKind::kConstant || s.dtype != DType::kF32) {
      return why = fmt::format("its scale '{}' is not a float constant", s.name), std::nullopt;
    }
    const DType dtype = IntDType(n, src);
    const Value* z =
        n.inputs.size() > src.zp_slot && n.inputs[src.zp_slot] != kNoValue ? &g_.value(n.inputs[src.zp_slot]) : nullptr;
    if (z != nullptr && z->kind != ValueKind::kConstant) {
      return why = fmt::format("its zero point '{}' is not a constant", z->name), std::nullopt;
    }
    const Attribute* block = n.attributes.Find("block_size");
    if (block != nullptr && block->type() == AttrType::kInt && block->i() != 0) {
      return why = "it quantizes in blocks (block_size)", std::nullopt;
    }
    const std::span<const float> scales = s.data.values<float>();
    const int64_t count = static_cast<int64_t>(scales.size());
    if (z != nullptr && z->data.NumElements() != count) {
      return why = "its scale and zero point differ in size", std::nullopt;
    }
    std::vector<int32_t> zps;
    for (int64_t i = 0; i < count; ++i) zps.push_back(z == nullptr ? 0 : IntElement(z->data, i));
    // Signed constants (weights, biases) with zero points 0 are symmetric, as octet's Convert marks them.
    const bool symmetric = g_.value(int_value).kind == ValueKind::kConstant && dtype != DType::kU8 &&
                           std::all_of(zps.begin(), zps.end(), [](int32_t z) { return z == 0; });
    Result<QParams> q = Internal("unset");
    if (count == 1 && s.data.shape().rank() <= 1) {
      q = QParams::Create(symmetric ? QScheme::kPerTensorSymmetric : QScheme::kPerTensorAffine, dtype, DTypeMin(dtype),
                          DTypeMax(dtype), {scales[0]}, {zps[0]});
    } else {
      const Value& x = g_.value(int_value);
      if (x.kind != ValueKind::kConstant) {
        return why = fmt::format("per-axis qparams on '{}', which is not a constant", x.name), std::nullopt;
      }
      int64_t axis = src.axis;
      const int rank = x.data.shape().rank();
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return why = fmt::format("axis {} is outside '{}'", axis, x.name), std::nullopt;
      q = QParams::Create(symmetric ? QScheme::kPerChannelSymmetric : QScheme::kPerChannelAffine, dtype,
                          DTypeMin(dtype), DTypeMax(dtype), std::vector<float>(scales.begin(), scales.end()), zps,
                          static_cast<int>(axis));
      if (q.ok()) {
        Status fits = q->ValidateFor(x.data.shape(), x.name);
        if (!fits.ok()) return why = fits.message(), std::nullopt;
      }
    }
    if (!q.ok()) return why = q.status().message(), std::nullopt;
    return *q;
  }

  // Every integer value written by a QuantizeLinear or read by a DequantizeLinear gets their qparams when they
  // agree; a value given two different ones keeps its Q/DQ nodes as ONNX ops.
  void AssignQParams() {
    const size_t nv = static_cast<size_t>(g_.num_values());
    std::vector<std::optional<QParams>> found(nv);
    std::vector<bool> conflict(nv, false);
    std::vector<std::string> conflict_why(nv);
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      for (const QParamSource& src : Sources(n)) {
        const ValueId v = src.value;
        std::string why;
        std::optional<QParams> qp = ConstQParams(n, src, why);
        const size_t k = static_cast<size_t>(v);
        if (!qp) {
          conflict[k] = true;
          conflict_why[k] = fmt::format("{} '{}': {}", n.op_type, n.name, why);
        } else if (found[k] && !SameQParams(*found[k], *qp)) {
          conflict[k] = true;
          conflict_why[k] = fmt::format("'{}' is given qparams {} and {} by different nodes", g_.value(v).name,
                                        found[k]->ToString(), qp->ToString());
        } else {
          found[k] = std::move(qp);
        }
      }
    }
    for (size_t k = 0; k < nv; ++k) {
      if (conflict[k]) {
        report_.kept_float.push_back(fmt::format("the quantized ONNX ops of '{}' stay as written: {}",
                                                 g_.value(static_cast<ValueId>(k)).name, conflict_why[k]));
        continue;
      }
      if (!found[k]) continue;
      Value& v = g_.mutable_value(static_cast<ValueId>(k));
      if (v.kind != ValueKind::kNode && v.dtype != found[k]->dtype()) continue;
      v.dtype = found[k]->dtype();
      v.qparams = std::move(found[k]);
    }
  }

  // Shape-only operators and Split on integers (octet's export leaves them there) pass their input's qparams on.
  void PropagateThroughShapeOps() {
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      if (!MovesCodes(n) || n.inputs.empty() || n.inputs[0] == kNoValue) continue;
      const Value& x = g_.value(n.inputs[0]);
      if (!Is8BitPerTensor(x.qparams)) continue;
      const DType dtype = x.dtype;
      const QParams xq = *x.qparams;
      for (ValueId out : n.outputs) {
        if (out == kNoValue || g_.value(out).qparams) continue;
        Value& y = g_.mutable_value(out);
        y.dtype = dtype;
        y.qparams = xq;
      }
    }
  }

  // A shape-only op moves codes: where its input's quant range was narrowed (a Clip absorbed above) and its output
  // has the same scale and zero point, the output takes the input's qparams. The nodes are in topological order.
  void SyncShapeOpRanges() {
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      if (!MovesCodes(n) || n.inputs.empty() || n.inputs[0] == kNoValue) continue;
      const std::optional<QParams> x = g_.value(n.inputs[0]).qparams;
      for (ValueId out : n.outputs) {
        if (out == kNoValue) continue;
        std::optional<QParams>& y = g_.mutable_value(out).qparams;
        if (Is8BitPerTensor(x) && Is8BitPerTensor(y) && x->dtype() == y->dtype() && x->scale() == y->scale() &&
            x->zero_point() == y->zero_point()) {
          y = x;
        }
      }
    }
  }

  void ConvertBoundaries() {
    for (int i = 0; i < g_.num_nodes(); ++i) {
      Node& n = g_.mutable_node(i);
      const bool q = IsOnnxOp(n, kQ), dq = IsOnnxOp(n, kDq);
      if (!q && !dq) continue;
      if (n.inputs.empty() || n.outputs.empty() || n.inputs[0] == kNoValue || n.outputs[0] == kNoValue) continue;
      const ValueId v = q ? n.outputs[0] : n.inputs[0];
      if (!g_.value(v).qparams) continue;
      n.domain = std::string(kInt8Domain);
      n.op_type = std::string(Int8OpName(q ? Int8Op::kQuantize : Int8Op::kDequantize));
      n.inputs.resize(1);
      n.attributes = {};
      ++(q ? report_.quantize : report_.dequantize);
    }
  }

  // A Clip on integer codes (octet's export since issue 23, opset 13's Clip on u8/s8). After a Quantize whose
  // codes it alone reads, a bound that is a preset's reduced range end (u8 127, the symmetric s8 -127 or its u8
  // shift 1) narrows the Quantize's quant range, as [qmin, qmax] clamps the codes itself; any other bound (a fused
  // Relu's zero point, a Clip's code) is an octet QClamp on the codes with that code's real value as its bound,
  // which FuseClamps folds into the producer as Convert would. Exact: both clamp the same codes.
  void AbsorbCodeClips() {
    for (int c = 0; c < g_.num_nodes(); ++c) {
      Node& clip = g_.mutable_node(c);
      if (!IsOnnxOp(clip, FloatOp::kClip) || clip.inputs.empty() || clip.inputs[0] == kNoValue ||
          clip.outputs.empty() || clip.outputs[0] == kNoValue) {
        continue;
      }
      const ValueId x = clip.inputs[0], y = clip.outputs[0];
      if (!Is8BitPerTensor(g_.value(x).qparams)) continue;
      const QParams xq = *g_.value(x).qparams;
      const DType dtype = xq.dtype();
      bool ok = true;
      // A bound's code, or `absent` (no bound).
      auto code = [&](size_t slot, int64_t absent) -> int64_t {
        if (clip.inputs.size() <= slot || clip.inputs[slot] == kNoValue) return absent;
        const Value& v = g_.value(clip.inputs[slot]);
        if (v.kind != ValueKind::kConstant || v.dtype != dtype || v.data.NumElements() != 1) {
          ok = false;
          return absent;
        }
        return IntElement(v.data, 0);
      };
      int64_t qmin = xq.quant_min(), qmax = xq.quant_max();
      const int64_t lo = std::max(code(1, qmin), qmin), hi = std::min(code(2, qmax), qmax);
      if (!ok || lo > hi) continue;
      const int p = producer_[static_cast<size_t>(x)];
      const bool after_quantize =
          IsInt8(p, Int8Op::kQuantize) && SoleConsumer(x) == c && !graph_output_[static_cast<size_t>(x)];
      if (after_quantize) {
        const int64_t reduced_lo = dtype == DType::kU8 ? 1 : -127;
        if (lo == reduced_lo && lo <= xq.zero_point()) qmin = lo;
        if (hi == 127 && dtype == DType::kU8 && hi >= xq.zero_point()) qmax = hi;
      }
      Result<QParams> range = QParams::PerTensor(dtype, xq.scale(), xq.zero_point(), qmin, qmax);
      if (!range.ok()) continue;
      Value& yv = g_.mutable_value(y);
      yv.dtype = dtype;
      yv.qparams = *range;
      if (lo == qmin && hi == qmax && after_quantize) {
        // Only the quant range: the Quantize writes y itself.
        g_.mutable_node(p).outputs[0] = y;
        dead_[static_cast<size_t>(c)] = true;
        continue;
      }
      if (after_quantize) g_.mutable_value(x).qparams = *range;
      AttributeMap attributes;
      auto real = [&](int64_t k) { return xq.scale() * static_cast<float>(k - xq.zero_point()); };
      if (lo > qmin) attributes.Set("min", real(lo));
      if (hi < qmax) attributes.Set("max", real(hi));
      clip.domain = std::string(kInt8Domain);
      clip.op_type = std::string(Int8OpName(Int8Op::kQClamp));
      clip.inputs.resize(1);
      clip.attributes = std::move(attributes);
    }
    Compact();
  }

  // Clip -> Quantize where the bounds are exactly the real values of two codes around the zero point: the Quantize
  // clamps to those codes itself when its output's quant range is narrowed to them (octet's export writes reduced
  // ranges, such as the x86 preset's 7-bit activations, this way). The Clip is dropped.
  void AbsorbRangeClips() {
    bool any = false;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& q = g_.node(i);
      if (!IsInt8Op(q, Int8Op::kQuantize)) continue;
      const int c = producer_[static_cast<size_t>(q.inputs[0])];
      if (c < 0 || !IsOnnxOp(g_.node(c), FloatOp::kClip) || SoleConsumer(q.inputs[0]) != i) continue;
      const Node& clip = g_.node(c);
      if (clip.inputs.empty() || clip.inputs[0] == kNoValue || SoleConsumer(clip.outputs[0]) != i) continue;
      bool ok = true;
      const std::optional<float> lo = ConstFloatInput(clip, 1, ok), hi = ConstFloatInput(clip, 2, ok);
      if (!ok) continue;
      Value& y = g_.mutable_value(q.outputs[0]);
      std::optional<QParams> narrowed = NarrowedTo(*y.qparams, lo, hi);
      if (!narrowed) continue;
      y.qparams = std::move(narrowed);
      g_.mutable_node(i).inputs[0] = clip.inputs[0];
      dead_[static_cast<size_t>(c)] = any = true;
    }
    if (any) Compact();
  }

  // q's quant range cut to the codes whose real values are exactly lo and hi (absent: no bound), or nullopt when a
  // bound is not exactly a code or the range would leave out the zero point.
  static std::optional<QParams> NarrowedTo(const QParams& q, std::optional<float> lo, std::optional<float> hi) {
    if (!Is8BitPerTensor(q)) return std::nullopt;
    auto code_of = [&](float bound) -> std::optional<int64_t> {
      const double k = std::nearbyint(static_cast<double>(bound) / q.scale()) + q.zero_point();
      if (!(k >= q.quant_min() && k <= q.quant_max())) return std::nullopt;
      const float back = q.scale() * static_cast<float>(static_cast<int64_t>(k) - q.zero_point());
      if (back != bound) return std::nullopt;
      return static_cast<int64_t>(k);
    };
    const std::optional<int64_t> a = lo ? code_of(*lo) : std::optional<int64_t>(q.quant_min());
    const std::optional<int64_t> b = hi ? code_of(*hi) : std::optional<int64_t>(q.quant_max());
    if (!a || !b || *a >= *b || *a > q.zero_point() || *b < q.zero_point()) return std::nullopt;
    Result<QParams> r = QParams::PerTensor(q.dtype(), q.scale(), q.zero_point(), *a, *b);
    if (!r.ok()) return std::nullopt;
    return *r;
  }

  // Drops the nodes marked dead.
  void Compact() {
    std::vector<Node> kept;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      if (!dead_[static_cast<size_t>(i)]) kept.push_back(std::move(g_.mutable_node(i)));
    }
    g_.mutable_nodes() = std::move(kept);
    dead_.assign(static_cast<size_t>(g_.num_nodes()), false);
  }

  bool IsInt8(int node, Int8Op op) const { return node >= 0 && IsInt8Op(g_.node(node), op); }

  // The integer value a float value was dequantized from (an octet Dequantize), or kNoValue.
  ValueId DequantizedFrom(ValueId f) const {
    if (f == kNoValue) return kNoValue;
    const int p = producer_[static_cast<size_t>(f)];
    if (!IsInt8(p, Int8Op::kDequantize) || dead_[static_cast<size_t>(p)]) return kNoValue;
    return g_.node(p).inputs[0];
  }

  // The float value's only consumer, or -1 (none, several, or a graph output).
  int SoleConsumer(ValueId f) const {
    const size_t k = static_cast<size_t>(f);
    if (graph_output_[k] || consumers_[k].size() != 1) return -1;
    return consumers_[k][0];
  }

  // The path from a float operator's output to the Quantize that ends its group.
  struct OutputChain {
    ValueId yq = kNoValue;
    std::vector<int> absorbed;  // activation nodes and the Quantize
    bool relu = false;
    std::optional<float> clip_min, clip_max;
    bool clip = false;
  };

  std::optional<float> ConstFloatInput(const Node& n, size_t slot, bool& ok) const {
    if (n.inputs.size() <= slot || n.inputs[slot] == kNoValue) return std::nullopt;
    const Value& v = g_.value(n.inputs[slot]);
    if (v.kind != ValueKind::kConstant || v.dtype != DType::kF32 || v.data.NumElements() != 1) {
      ok = false;
      return std::nullopt;
    }
    return v.data.values<float>()[0];
  }

  std::optional<OutputChain> FollowOutput(ValueId f, bool allow_activation, std::string& why) const {
    OutputChain c;
    for (int step = 0; step < 3; ++step) {
      const int k = SoleConsumer(f);
      if (k < 0) {
        why = fmt::format("its output '{}' is not read by exactly one QuantizeLinear", g_.value(f).name);
        return std::nullopt;
      }
      const Node& n = g_.node(k);
      c.absorbed.push_back(k);
      if (IsInt8Op(n, Int8Op::kQuantize)) {
        c.yq = n.outputs[0];
        if (!Is8BitPerTensor(g_.value(c.yq).qparams)) {
          why = fmt::format("its output '{}' is quantized per axis or to int32", g_.value(c.yq).name);
          return std::nullopt;
        }
        return c;
      }
      if (!allow_activation || c.relu + c.clip >= 2 || !n.domain.empty() || n.outputs.empty() ||
          n.outputs[0] == kNoValue) {
        break;
      }
      if (IsOpType(n.op_type, FloatOp::kRelu) && !c.relu) {
        c.relu = true;
      } else if (IsOpType(n.op_type, FloatOp::kClip) && !c.clip) {
        bool ok = true;
        c.clip_min = ConstFloatInput(n, 1, ok);
        c.clip_max = ConstFloatInput(n, 2, ok);
        if (!ok) {
          why = fmt::format("Clip '{}' has bounds that are not float constants", n.name);
          return std::nullopt;
        }
        c.clip = true;
      } else {
        break;
      }
      f = n.outputs[0];
    }
    why = fmt::format("its output '{}' does not reach a QuantizeLinear{}", g_.value(f).name,
                      allow_activation ? " through at most a Relu and a Clip" : "");
    return std::nullopt;
  }

  // A clip bound that is exactly the real value of a code of y narrows y's quant range (octet's export writes
  // reduced ranges that way); otherwise the Clip is fused as the activation. False when a Relu and such a Clip
  // meet (one fused activation cannot express both).
  bool ApplyActivation(const OutputChain& c, AttributeMap& attributes) {
    if (c.relu) attributes.Set("activation", std::string(FloatOpName(FloatOp::kRelu)));
    if (!c.clip) return true;
    Value& y = g_.mutable_value(c.yq);
    if (std::optional<QParams> narrowed = NarrowedTo(*y.qparams, c.clip_min, c.clip_max)) {
      y.qparams = std::move(narrowed);
      return true;
    }
    if (c.relu) return false;
    attributes.Set("activation", std::string(FloatOpName(FloatOp::kClip)));
    if (c.clip_min) attributes.Set("activation_min", *c.clip_min);
    if (c.clip_max) attributes.Set("activation_max", *c.clip_max);
    return true;
  }

  void KeepFloat(const Node& n, const std::string& why) {
    report_.kept_float.push_back(fmt::format("'{}' ({}) stays float: {}", n.name, n.op_type, why));
  }

  // Replaces node i with the int8 node and marks the absorbed ones dead.
  void Rewrite(int i, Int8Op op, std::vector<ValueId> inputs, AttributeMap attributes, const OutputChain& c) {
    Node& n = g_.mutable_node(i);
    n.domain = std::string(kInt8Domain);
    n.op_type = std::string(Int8OpName(op));
    n.inputs = std::move(inputs);
    n.outputs = {c.yq};
    n.attributes = std::move(attributes);
    for (int k : c.absorbed) dead_[static_cast<size_t>(k)] = true;
    ++report_.groups;
  }

  // A constant copy of `w` as s8 (u8 codes shifted by -128 with their zero points), or w itself.
  Result<ValueId> WeightAsS8(ValueId w) {
    const Value& v = g_.value(w);
    if (v.dtype == DType::kS8) return w;
    const QParams& q = *v.qparams;
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(DType::kS8, v.data.shape()));
    const uint8_t* src = v.data.data<uint8_t>();
    int8_t* dst = t.data<int8_t>();
    for (int64_t i = 0; i < t.NumElements(); ++i) dst[i] = static_cast<int8_t>(int32_t{src[i]} - 128);
    std::vector<int32_t> zps = q.zero_points();
    for (int32_t& z : zps) z -= 128;
    OCTET_ASSIGN_OR_RETURN(QParams s8,
                           QParams::Create(q.per_channel() ? QScheme::kPerChannelAffine : QScheme::kPerTensorAffine,
                                           DType::kS8, -128, 127, q.scales(), zps, q.axis()));
    std::string name = v.name + ".s8";
    while (g_.FindValue(name) != kNoValue) name += "_";
    OCTET_ASSIGN_OR_RETURN(ValueId id, g_.AddConstant(name, std::move(t)));
    g_.mutable_value(id).qparams = std::move(s8);
    return id;
  }

  // The bias of QConv / QGemm: an s32 constant whose qparams are exactly x_scale * w_scale[c], else the bias in
  // float (Prepare quantizes it with those scales). kNoValue with `why` when it cannot be used.
  Result<ValueId> Bias(ValueId b, const QParams& xq, const QParams& wq, int64_t channels, std::string& why) {
    const ValueId bq = DequantizedFrom(b);
    const Value& src = g_.value(bq != kNoValue ? bq : b);
    if (src.kind != ValueKind::kConstant || src.data.NumElements() != channels ||
        (bq == kNoValue && src.dtype != DType::kF32)) {
      why = fmt::format("its bias '{}' is not a constant of {} values", g_.value(b).name, channels);
      return kNoValue;
    }
    if (bq == kNoValue) {
      if (src.data.shape().rank() == 1) return b;
      OCTET_ASSIGN_OR_RETURN(Tensor t, src.data.Reshaped(Shape({channels})));
      return AddConstant(src.name + ".1d", std::move(t));
    }
    const QParams& q = *src.qparams;
    bool exact = src.dtype == DType::kS32 && src.data.shape().rank() == 1;
    for (int64_t c = 0; exact && c < channels; ++c) {
      const float ws = wq.scales()[static_cast<size_t>(wq.per_channel() ? c : 0)];
      const float bs = q.scales()[static_cast<size_t>(q.per_channel() ? c : 0)];
      const int32_t bz = q.zero_points()[static_cast<size_t>(q.per_channel() ? c : 0)];
      exact = bs == xq.scale() * ws && bz == 0;
    }
    if (exact) return bq;
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(DType::kF32, Shape({channels})));
    for (int64_t c = 0; c < channels; ++c) {
      const size_t k = static_cast<size_t>(q.per_channel() ? c : 0);
      t.data<float>()[c] =
          (static_cast<float>(IntElement(src.data, c)) - static_cast<float>(q.zero_points()[k])) * q.scales()[k];
    }
    return AddConstant(src.name + ".f32", std::move(t));
  }

  Result<ValueId> AddConstant(std::string name, Tensor t) {
    while (g_.FindValue(name) != kNoValue) name += "_";
    return g_.AddConstant(name, std::move(t));
  }

  Status TryWeighted(int i, Int8Op op) {
    const Node n = g_.node(i);
    const ValueId x = DequantizedFrom(n.inputs[0]);
    if (x == kNoValue || !Is8BitPerTensor(g_.value(x).qparams)) {
      return KeepFloat(n, "its input 0 is not a per-tensor u8/s8 DequantizeLinear"), OkStatus();
    }
    const ValueId w = n.inputs.size() > 1 ? DequantizedFrom(n.inputs[1]) : kNoValue;
    if (w == kNoValue || g_.value(w).kind != ValueKind::kConstant || g_.value(w).dtype == DType::kS32) {
      return KeepFloat(n, "its weight is not a DequantizeLinear of a u8/s8 constant"), OkStatus();
    }
    const Value& wv = g_.value(w);
    const QParams& wq = *wv.qparams;
    int want_axis = 0;
    int64_t channels = wv.data.shape().rank() > 0 ? wv.data.shape().dim(0) : 1;
    if (op == Int8Op::kQGemm) {
      const Result<int64_t> ta = n.attributes.GetInt("transA", 0), tb = n.attributes.GetInt("transB", 0);
      const Result<float> al = n.attributes.GetFloat("alpha", 1.0f), be = n.attributes.GetFloat("beta", 1.0f);
      if (!ta.ok() || !tb.ok() || !al.ok() || !be.ok() || *ta != 0 || *al != 1.0f || *be != 1.0f) {
        return KeepFloat(n, "QGemm needs transA = 0 and alpha = beta = 1"), OkStatus();
      }
      const bool trans_b = *tb != 0;
      if (wv.data.shape().rank() != 2) return KeepFloat(n, "its weight is not 2-D"), OkStatus();
      want_axis = trans_b ? 0 : 1;
      channels = wv.data.shape().dim(want_axis);
    } else if (op == Int8Op::kQMatMul) {
      if (wv.data.shape().rank() != 2) return KeepFloat(n, "its weight is not 2-D"), OkStatus();
      want_axis = 1;
      channels = wv.data.shape().dim(1);
    }
    if (wq.per_channel() && wq.axis() != want_axis) {
      return KeepFloat(n, fmt::format("its weight is quantized along axis {}, not the output channels' {}", wq.axis(),
                                      want_axis)),
             OkStatus();
    }
    std::string why;
    std::optional<OutputChain> c = FollowOutput(n.outputs[0], true, why);
    if (!c) return KeepFloat(n, why), OkStatus();
    std::vector<ValueId> inputs = {x};
    OCTET_ASSIGN_OR_RETURN(ValueId ws8, WeightAsS8(w));
    inputs.push_back(ws8);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      if (op == Int8Op::kQMatMul) return KeepFloat(n, "MatMul has no bias"), OkStatus();
      OCTET_ASSIGN_OR_RETURN(ValueId b, Bias(n.inputs[2], *g_.value(x).qparams, wq, channels, why));
      if (b == kNoValue) return KeepFloat(n, why), OkStatus();
      inputs.push_back(b);
    }
    AttributeMap attributes = n.attributes;
    attributes.Set("requantization", "fp32");
    if (!ApplyActivation(*c, attributes)) return KeepFloat(n, "a Relu and a Clip follow it"), OkStatus();
    Rewrite(i, op, std::move(inputs), std::move(attributes), *c);
    return OkStatus();
  }

  // HardSwish as opset 13 writes it (octet's export too): x * HardSigmoid(x, alpha 1/6, beta 1/2). For HardSigmoid
  // node h of a dequantized x, the Mul reading h's only output and x, else -1.
  int HardSwishOf(int h) const {
    const Node& n = g_.node(h);
    if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0] == kNoValue) return -1;
    if (DequantizedFrom(n.inputs[0]) == kNoValue) return -1;
    const Result<float> alpha = n.attributes.GetFloat("alpha", 0.2f), beta = n.attributes.GetFloat("beta", 0.5f);
    if (!alpha.ok() || !beta.ok() || std::fabs(*alpha - 1.0f / 6.0f) > 1e-6f || *beta != 0.5f) return -1;
    const int m = SoleConsumer(n.outputs[0]);
    if (m < 0 || !IsOnnxOp(g_.node(m), FloatOp::kMul) || g_.node(m).inputs.size() != 2) return -1;
    const Node& mul = g_.node(m);
    const ValueId other = mul.inputs[0] == n.outputs[0] ? mul.inputs[1] : mul.inputs[0];
    if (DequantizedFrom(other) != DequantizedFrom(n.inputs[0])) return -1;
    return m;
  }

  // Mul(x, HardSigmoid(x)) -> Quantize becomes QLookup of HardSwish.
  bool TryHardSwish(int i) {
    const Node& n = g_.node(i);
    if (n.inputs.size() != 2) return false;
    for (ValueId v : n.inputs) {
      const int h = v == kNoValue ? -1 : producer_[static_cast<size_t>(v)];
      if (h < 0 || dead_[static_cast<size_t>(h)] || !IsOnnxOp(g_.node(h), FloatOp::kHardSigmoid) ||
          HardSwishOf(h) != i) {
        continue;
      }
      const ValueId x = DequantizedFrom(g_.node(h).inputs[0]);
      if (!Is8BitPerTensor(g_.value(x).qparams)) return false;
      std::string why;
      std::optional<OutputChain> c = FollowOutput(n.outputs[0], false, why);
      if (!c) {
        KeepFloat(n, why);
        return true;
      }
      AttributeMap attributes;
      attributes.Set("function", std::string(FloatOpName(FloatOp::kHardSwish)));
      dead_[static_cast<size_t>(h)] = true;
      Rewrite(i, Int8Op::kQLookup, {x}, std::move(attributes), *c);
      return true;
    }
    return false;
  }

  // QLinearConv / QLinearMatMul (ONNX Runtime's QOperator form) whose weight, bias and qparams are constants:
  // QConv / QMatMul on the same integers (fp32 requantization, as the ONNX ops compute it here).
  Status TryQLinear(int i, Int8Op op) {
    const Node n = g_.node(i);
    auto stays = [&](const char* why) {
      KeepFloat(n, why);
      return OkStatus();
    };
    if (n.inputs.size() < 8 || n.inputs[0] == kNoValue) return stays("it lacks required inputs");
    const ValueId x = n.inputs[0];
    const ValueId w = n.inputs[3];
    const ValueId y = n.outputs[0];
    if (!Is8BitPerTensor(g_.value(x).qparams) || !Is8BitPerTensor(g_.value(y).qparams)) {
      return stays("its input or output qparams are not per-tensor constants");
    }
    if (w == kNoValue || g_.value(w).kind != ValueKind::kConstant || !g_.value(w).qparams ||
        (g_.value(w).dtype != DType::kU8 && g_.value(w).dtype != DType::kS8)) {
      return stays("its weight or the weight's qparams are not u8/s8 constants");
    }
    const QParams& wq = *g_.value(w).qparams;
    const Shape& ws = g_.value(w).data.shape();
    if (op == Int8Op::kQMatMul && ws.rank() != 2) return stays("its weight is not 2-D");
    if (op == Int8Op::kQConv && ws.rank() < 3) return stays("its weight has rank below 3");
    const int axis = op == Int8Op::kQConv ? 0 : 1;
    if (wq.per_channel() && wq.axis() != axis) return stays("its weight is quantized along another axis");
    std::vector<ValueId> inputs = {x};
    OCTET_ASSIGN_OR_RETURN(ValueId ws8, WeightAsS8(w));
    inputs.push_back(ws8);
    if (n.inputs.size() > 8 && n.inputs[8] != kNoValue) {
      const Value& b = g_.value(n.inputs[8]);
      const int64_t channels = ws.dim(0);
      if (b.kind != ValueKind::kConstant || b.dtype != DType::kS32 || b.data.shape().rank() != 1 ||
          b.data.NumElements() != channels) {
        return stays("its bias is not an int32 constant of one value per output channel");
      }
      // The bias's qparams, implied by ONNX: scale x_scale * w_scale[c], zero point 0.
      const float xs = g_.value(x).qparams->scale();
      std::vector<float> scales;
      for (int64_t c = 0; c < (wq.per_channel() ? channels : 1); ++c) {
        scales.push_back(xs * wq.scales()[static_cast<size_t>(c)]);
      }
      const std::vector<int32_t> zeros(scales.size(), 0);
      OCTET_ASSIGN_OR_RETURN(
          QParams bq, QParams::Create(wq.per_channel() ? QScheme::kPerChannelSymmetric : QScheme::kPerTensorSymmetric,
                                      DType::kS32, INT32_MIN, INT32_MAX, scales, zeros, 0));
      OCTET_ASSIGN_OR_RETURN(ValueId bias, AddConstant(b.name + ".bias", b.data));
      g_.mutable_value(bias).qparams = std::move(bq);
      inputs.push_back(bias);
    }
    AttributeMap attributes = op == Int8Op::kQConv ? n.attributes : AttributeMap{};
    attributes.Set("requantization", "fp32");
    OutputChain c;
    c.yq = y;
    Rewrite(i, op, std::move(inputs), std::move(attributes), c);
    return OkStatus();
  }

  // Dequantize -> Reshape | Flatten | ... -> Quantize with equal qparams: the shape op moves the integers instead.
  Status TryShapeOnly(int i) {
    const Node& n = g_.node(i);
    const ValueId x = DequantizedFrom(n.inputs[0]);
    if (x == kNoValue || !Is8BitPerTensor(g_.value(x).qparams)) return OkStatus();
    std::string why;
    std::optional<OutputChain> c = FollowOutput(n.outputs[0], false, why);
    if (!c || !SameQParams(*g_.value(x).qparams, *g_.value(c->yq).qparams)) return OkStatus();
    Node& m = g_.mutable_node(i);
    m.inputs[0] = x;
    m.outputs = {c->yq};
    for (int k : c->absorbed) dead_[static_cast<size_t>(k)] = true;
    return OkStatus();
  }

  // The quantized values n's inputs dequantize, or nullopt when one is not a per-tensor u8/s8 DequantizeLinear.
  std::optional<std::vector<ValueId>> PerTensorDequantizedInputs(const Node& n) const {
    std::vector<ValueId> in;
    for (ValueId v : n.inputs) {
      const ValueId q = DequantizedFrom(v);
      if (q == kNoValue || !Is8BitPerTensor(g_.value(q).qparams)) return std::nullopt;
      in.push_back(q);
    }
    return in;
  }

  Status TryGroup(int i) {
    const Node& n = g_.node(i);
    if (!n.domain.empty() || n.outputs.empty() || n.outputs[0] == kNoValue) return OkStatus();
    if (IsOnnxOp(n, FloatOp::kHardSigmoid) && HardSwishOf(i) >= 0) return OkStatus();  // rewritten at its Mul
    if (IsOnnxOp(n, FloatOp::kMul) && TryHardSwish(i)) return OkStatus();
    if (IsOnnxOp(n, FloatOp::kQLinearConv)) return TryQLinear(i, Int8Op::kQConv);
    if (IsOnnxOp(n, FloatOp::kQLinearMatMul)) return TryQLinear(i, Int8Op::kQMatMul);
    bool reads_dequantized = false;
    for (ValueId v : n.inputs) reads_dequantized = reads_dequantized || DequantizedFrom(v) != kNoValue;
    if (!reads_dequantized) return OkStatus();
    if (IsShapeOnly(n)) return TryShapeOnly(i);
    std::optional<Int8Op> op = Int8OpFrom(n.op_type, /*dynamic=*/false);
    if (!op) return KeepFloat(n, "octet has no int8 operator for it"), OkStatus();
    // MatMul of two activations (attention's Q x K^T, P x V): QBatchMatMul, as Convert makes it.
    if (*op == Int8Op::kQMatMul && n.inputs.size() == 2 && DequantizedFrom(n.inputs[1]) != kNoValue &&
        g_.value(DequantizedFrom(n.inputs[1])).kind != ValueKind::kConstant) {
      op = Int8Op::kQBatchMatMul;
    }
    const Int8OpInfo& info = Int8OpInfoOf(*op);
    std::string why;
    switch (info.convert) {
      case ConvertForm::kWeighted: return TryWeighted(i, *op);
      case ConvertForm::kBinary: {
        std::optional<std::vector<ValueId>> in = PerTensorDequantizedInputs(n);
        if (!in) return KeepFloat(n, "an input is not a per-tensor u8/s8 DequantizeLinear"), OkStatus();
        std::optional<OutputChain> c = FollowOutput(n.outputs[0], true, why);
        if (!c) return KeepFloat(n, why), OkStatus();
        AttributeMap attributes;
        if (!ApplyActivation(*c, attributes)) return KeepFloat(n, "a Relu and a Clip follow it"), OkStatus();
        const Result<std::string> act = attributes.GetString("activation", "");
        if (*op == Int8Op::kQBatchMatMul && (!act.ok() || (!act->empty() && !IsOpType(*act, FloatOp::kRelu)))) {
          return KeepFloat(n, "QBatchMatMul fuses only a Relu, not a Clip"), OkStatus();
        }
        Rewrite(i, *op, std::move(*in), std::move(attributes), *c);
        return OkStatus();
      }
      case ConvertForm::kShared:
      case ConvertForm::kUnary:
      case ConvertForm::kClamp: {
        const ValueId x = DequantizedFrom(n.inputs[0]);
        if (x == kNoValue || !Is8BitPerTensor(g_.value(x).qparams)) {
          return KeepFloat(n, "its input is not a per-tensor u8/s8 DequantizeLinear"), OkStatus();
        }
        if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) {
          return KeepFloat(n, "its second output (indices) is used"), OkStatus();
        }
        std::optional<OutputChain> c = FollowOutput(n.outputs[0], false, why);
        if (!c) return KeepFloat(n, why), OkStatus();
        const bool shared = info.convert != ConvertForm::kUnary;
        // MaxPool-like ops select input codes, which lie in the input's quant range already: octet's export writes
        // no Clip for an output range narrower than the dtype there, so the output takes the input's range.
        if (shared) {
          const QParams& xq = *g_.value(x).qparams;
          std::optional<QParams>& yq = g_.mutable_value(c->yq).qparams;
          if (xq.dtype() == yq->dtype() && xq.scale() == yq->scale() && xq.zero_point() == yq->zero_point() &&
              yq->quant_min() <= xq.quant_min() && xq.quant_max() <= yq->quant_max()) {
            yq = xq;
          }
        }
        if (shared && !SameQParams(*g_.value(x).qparams, *g_.value(c->yq).qparams)) {
          return KeepFloat(n,
                           "its output is quantized with other qparams than its input (octet's int8 form "
                           "moves codes unchanged)"),
                 OkStatus();
        }
        AttributeMap attributes = n.attributes;
        std::vector<ValueId> in = {x};
        // QLayerNorm keeps its Scale and B: float constants of the last axis's width, as Convert leaves them.
        if (*op == Int8Op::kQLayerNorm || *op == Int8Op::kQSoftmax) {
          const Result<int64_t> axis = n.attributes.GetInt("axis", -1);
          if (!axis.ok() || *axis != -1) return KeepFloat(n, "its int8 form works over axis -1 only"), OkStatus();
        }
        if (*op == Int8Op::kQLayerNorm) {
          for (size_t k = 1; k < n.inputs.size(); ++k) {
            const ValueId v = n.inputs[k];
            if (v != kNoValue && (g_.value(v).kind != ValueKind::kConstant || g_.value(v).dtype != DType::kF32)) {
              return KeepFloat(n, fmt::format("its input '{}' is not a float constant", g_.value(v).name)), OkStatus();
            }
            in.push_back(v);
          }
        }
        // QLookup: a 256-entry table through the ONNX function named by `function`, its attributes as ONNX's.
        if (*op == Int8Op::kQLookup) attributes.Set("function", n.op_type);
        if (info.convert == ConvertForm::kClamp) {
          attributes = {};
          if (IsOpType(n.op_type, FloatOp::kRelu)) {
            attributes.Set("min", 0.0f);
          } else {
            bool ok = true;
            const std::optional<float> lo = ConstFloatInput(n, 1, ok), hi = ConstFloatInput(n, 2, ok);
            if (!ok) return KeepFloat(n, "its bounds are not float constants"), OkStatus();
            if (lo) attributes.Set("min", *lo);
            if (hi) attributes.Set("max", *hi);
          }
        }
        Rewrite(i, *op, std::move(in), std::move(attributes), *c);
        return OkStatus();
      }
      case ConvertForm::kConcat: {
        std::optional<std::vector<ValueId>> in = PerTensorDequantizedInputs(n);
        if (!in) return KeepFloat(n, "an input is not a per-tensor u8/s8 DequantizeLinear"), OkStatus();
        std::optional<OutputChain> c = FollowOutput(n.outputs[0], false, why);
        if (!c) return KeepFloat(n, why), OkStatus();
        // Inputs quantized otherwise than the output are requantized by QConcat itself.
        Rewrite(i, *op, std::move(*in), n.attributes, *c);
        return OkStatus();
      }
      case ConvertForm::kDynamic:
      case ConvertForm::kInserted:
      case ConvertForm::kUnset: break;
    }
    KeepFloat(n, fmt::format("{} groups are not recognised at import", n.op_type));
    return OkStatus();
  }

  // A QClamp reading the only output of a QConv / QGemm / QMatMul / QAdd / QMul with the same qparams becomes that
  // producer's fused activation, as Convert fuses it (quant/fuse_int8_activation.h; octet's export writes such a
  // fused clamp as op -> Q -> DQ -> Clip -> Q). Exact: both clamp the same codes.
  void FuseClamps() {
    std::vector<int> producer(static_cast<size_t>(g_.num_values()), -1);
    std::vector<int> uses(static_cast<size_t>(g_.num_values()), 0);
    for (int i = 0; i < g_.num_nodes(); ++i) {
      if (dead_[static_cast<size_t>(i)]) continue;
      for (ValueId v : g_.node(i).outputs) {
        if (v != kNoValue) producer[static_cast<size_t>(v)] = i;
      }
      for (ValueId v : g_.node(i).inputs) {
        if (v != kNoValue) ++uses[static_cast<size_t>(v)];
      }
    }
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& clamp = g_.node(i);
      if (dead_[static_cast<size_t>(i)] || !IsInt8Op(clamp, Int8Op::kQClamp)) continue;
      const ValueId mid = clamp.inputs[0];
      const int p = producer[static_cast<size_t>(mid)];
      if (p < 0 || uses[static_cast<size_t>(mid)] != 1 || graph_output_[static_cast<size_t>(mid)]) continue;
      const Node& prod = g_.node(p);
      const bool fusable = IsInt8Op(prod, Int8Op::kQConv) || IsInt8Op(prod, Int8Op::kQGemm) ||
                           IsInt8Op(prod, Int8Op::kQMatMul) || IsInt8Op(prod, Int8Op::kQAdd) ||
                           IsInt8Op(prod, Int8Op::kQMul);
      if (!fusable || !SameQParams(*g_.value(mid).qparams, *g_.value(clamp.outputs[0]).qparams)) continue;
      const Result<std::string> activation = prod.attributes.GetString("activation", "");
      if (!activation.ok() || (!activation->empty() && !IsOpType(*activation, FloatOp::kRelu))) continue;
      const std::string act = *activation;
      float lo = -INFINITY, hi = INFINITY;
      if (const Attribute* a = clamp.attributes.Find("min"); a != nullptr && a->type() == AttrType::kFloat) lo = a->f();
      if (const Attribute* a = clamp.attributes.Find("max"); a != nullptr && a->type() == AttrType::kFloat) hi = a->f();
      if (IsOpType(act, FloatOp::kRelu)) lo = std::max(lo, 0.0f);
      if (!(lo <= hi)) continue;
      Node& q = g_.mutable_node(p);
      q.outputs[0] = clamp.outputs[0];
      q.attributes.Erase("activation_min");
      q.attributes.Erase("activation_max");
      if (lo == 0.0f && hi == INFINITY) {
        q.attributes.Set("activation", std::string(FloatOpName(FloatOp::kRelu)));
      } else {
        q.attributes.Set("activation", std::string(FloatOpName(FloatOp::kClip)));
        if (lo != -INFINITY) q.attributes.Set("activation_min", lo);
        if (hi != INFINITY) q.attributes.Set("activation_max", hi);
      }
      producer[static_cast<size_t>(clamp.outputs[0])] = p;
      dead_[static_cast<size_t>(i)] = true;
    }
  }

  // A QConv / QGemm / QMatMul whose output's zero point is its quant_min clamps at real 0 whether or not it has a
  // Relu, and octet's export writes such a fused Relu as no node at all (ONNX Runtime also drops a Relu before a
  // QuantizeLinear there). A linear op's own output is signed, so a range starting at exactly 0 is a Relu's: it is
  // read back as Convert fused it, activation Relu, with the same codes, and the numeric suite then counts, as
  // for the .octet model, only the saturation the Relu does not do on purpose. QAdd / QMul are left alone: their
  // outputs are often nonnegative without a Relu (Sigmoid * x, 1 + Erf), and a wrong guess would hide real clipping.
  void InferZeroPointRelus() {
    for (int i = 0; i < g_.num_nodes(); ++i) {
      Node& n = g_.mutable_node(i);
      if (dead_[static_cast<size_t>(i)] || n.outputs.empty() || n.outputs[0] == kNoValue) continue;
      const bool fusable = IsInt8Op(n, Int8Op::kQConv) || IsInt8Op(n, Int8Op::kQGemm) || IsInt8Op(n, Int8Op::kQMatMul);
      const std::optional<QParams>& y = g_.value(n.outputs[0]).qparams;
      if (!fusable || !Is8BitPerTensor(y) || y->zero_point() != y->quant_min() || n.attributes.Has("activation")) {
        continue;
      }
      n.attributes.Set("activation", std::string(FloatOpName(FloatOp::kRelu)));
    }
  }

  // Drops the absorbed nodes and the Dequantize nodes nothing reads any more.
  Status RemoveDeadNodes() {
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<int> live_uses(static_cast<size_t>(g_.num_values()), 0);
      for (int i = 0; i < g_.num_nodes(); ++i) {
        if (dead_[static_cast<size_t>(i)]) continue;
        for (ValueId v : g_.node(i).inputs) {
          if (v != kNoValue) ++live_uses[static_cast<size_t>(v)];
        }
      }
      for (int i = 0; i < g_.num_nodes(); ++i) {
        const Node& n = g_.node(i);
        const bool removable = IsInt8Op(n, Int8Op::kDequantize) || IsConstantMaker(n) || IsOnnxOp(n, FloatOp::kCast);
        if (dead_[static_cast<size_t>(i)] || !removable || n.outputs.size() != 1 || n.outputs[0] == kNoValue) {
          continue;
        }
        const size_t y = static_cast<size_t>(n.outputs[0]);
        if (live_uses[y] == 0 && !graph_output_[y]) dead_[static_cast<size_t>(i)] = changed = true;
      }
    }
    Compact();
    return OkStatus();
  }

  Graph& g_;
  std::vector<int> producer_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> graph_output_;
  std::vector<bool> dead_;
  QdqImportReport report_;
};

}  // namespace

Result<QdqImportReport> RecognizeQdqGroups(Graph& graph) {
  OCTET_ASSIGN_OR_RETURN(QdqImportReport report, Recognizer(graph).Run());
  // octet's own one-Gemm form of a one-input-channel Conv (its export's dense stems) back into the QConv.
  OCTET_RETURN_IF_ERROR(FoldDenseStems(graph).status());
  return report;
}

bool HasInt8Ops(const Graph& graph) {
  for (const Node& n : graph.nodes()) {
    if (n.domain == kInt8Domain) return true;
  }
  return false;
}

}  // namespace octet
