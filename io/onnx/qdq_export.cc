// Graph -> ONNX QDQ ModelProto (see qdq_export.h for the mapping).
#include "io/onnx/qdq_export.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/op_table.h"
#include "io/file_util.h"
#include "io/onnx/onnx_op_names.h"
#include "io/onnx/qdq_export_dense_stem.h"

namespace octet {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;
using onnx_names::IsOpType;

constexpr int64_t kQdqOpset = 13;
constexpr int64_t kQdqIrVersion = 7;  // the IR version of opset 13
// A graph that keeps a float LayerNormalization (opset 17) is written at opset 17 (IR version 8): the operators
// octet writes mean the same there as at 13 (QuantizeLinear, DequantizeLinear and Reshape without allowzero
// included).
constexpr int64_t kLayerNormOpset = 17;
constexpr int64_t kLayerNormIrVersion = 8;

bool NeedsOpset17(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if ((node.domain.empty() || node.domain == "ai.onnx") && IsOpType(node.op_type, FloatOp::kLayerNormalization)) {
      return true;
    }
  }
  return false;
}

// octet's attributes that exist only for its own kernels (numerics and fused activations).
const std::set<std::string, std::less<>> kOctetOnlyAttributes = {"requantization", "activation",   "activation_min",
                                                                 "activation_max", "reduce_range", "rounding",
                                                                 "non_finite",     "per_token"};

Result<int32_t> OnnxElemType(DType dtype) {
  switch (dtype) {
    case DType::kF32: return TensorProto::FLOAT;
    case DType::kU8: return TensorProto::UINT8;
    case DType::kS8: return TensorProto::INT8;
    case DType::kS32: return TensorProto::INT32;
    default: return Unimplemented("{} tensors have no ONNX form here", dtype);
  }
}

// octet keeps ONNX's INT64 tensors (shapes, axes, indices) as s32; they go back out as INT64, which is what ONNX's
// operators want there. Only s32 tensors with qparams (biases) are real int32 tensors.
Status FillTensor(const Tensor& t, const std::string& name, TensorProto& proto, bool int64 = false) {
  OCTET_ASSIGN_OR_RETURN(int32_t elem, OnnxElemType(t.dtype()));
  proto.set_name(name);
  for (int64_t d : t.shape().dims()) proto.add_dims(d);
  if (int64 && t.dtype() == DType::kS32) {
    proto.set_data_type(TensorProto::INT64);
    std::string bytes(static_cast<size_t>(t.NumElements()) * 8, '\0');
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      const int64_t v = t.data<int32_t>()[i];
      std::memcpy(bytes.data() + i * 8, &v, 8);
    }
    proto.set_raw_data(std::move(bytes));
    return OkStatus();
  }
  proto.set_data_type(elem);
  proto.set_raw_data(static_cast<const char*>(t.raw_data()), t.SizeBytes());
  return OkStatus();
}

Status FillAttribute(const std::string& name, const Attribute& a, AttributeProto& proto) {
  proto.set_name(name);
  switch (a.type()) {
    case AttrType::kInt: proto.set_type(AttributeProto::INT); proto.set_i(a.i()); break;
    case AttrType::kFloat: proto.set_type(AttributeProto::FLOAT); proto.set_f(a.f()); break;
    case AttrType::kString: proto.set_type(AttributeProto::STRING); proto.set_s(a.s()); break;
    case AttrType::kTensor:
      proto.set_type(AttributeProto::TENSOR);
      OCTET_RETURN_IF_ERROR(FillTensor(a.t(), name, *proto.mutable_t(), /*int64=*/true));
      break;
    case AttrType::kInts:
      proto.set_type(AttributeProto::INTS);
      for (int64_t v : a.ints()) proto.add_ints(v);
      break;
    case AttrType::kFloats:
      proto.set_type(AttributeProto::FLOATS);
      for (float v : a.floats()) proto.add_floats(v);
      break;
    case AttrType::kStrings:
      proto.set_type(AttributeProto::STRINGS);
      for (const std::string& v : a.strings()) proto.add_strings(v);
      break;
  }
  return OkStatus();
}

Tensor ScalarF32(float v) {
  Tensor t = Tensor::Create(DType::kF32, Shape{}).value();
  t.data<float>()[0] = v;
  return t;
}

class QdqWriter {
 public:
  QdqWriter(const Graph& graph, const QdqExportOptions& options, onnx::GraphProto& proto)
      : graph_(graph), options_(options), proto_(proto) {
    for (const Value& v : graph.values()) used_names_.insert(v.name);
    for (const Node& n : graph.nodes()) used_names_.insert(n.name);
  }

  Status Write() {
    ShiftS8ActivationsToU8();
    proto_.set_name(graph_.name());
    for (ValueId id : graph_.inputs()) OCTET_RETURN_IF_ERROR(AddValueInfo(id, proto_.add_input()));
    const std::vector<int> producers = graph_.Producers();
    for (int n = 0; n < graph_.num_nodes(); ++n) {
      const Node& node = graph_.node(n);
      Status st = WriteNode(node);
      if (!st.ok()) return st.WithContext(fmt::format("node '{}' ({}{}{})", node.name, node.domain,
                                                      node.domain.empty() ? "" : ".", node.op_type));
    }
    for (ValueId id : graph_.outputs()) {
      OCTET_RETURN_IF_ERROR(Ref(id).status());
      OCTET_RETURN_IF_ERROR(AddValueInfo(id, proto_.add_output()));
    }
    if (options_.expose_quantized_outputs) {
      for (ValueId id : graph_.outputs()) {
        const int p = producers[static_cast<size_t>(id)];
        if (p < 0 || !IsInt8Op(graph_.node(p), Int8Op::kDequantize)) continue;
        OCTET_RETURN_IF_ERROR(AddValueInfo(graph_.node(p).inputs[0], proto_.add_output()));
      }
    }
    return OkStatus();
  }

 private:
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_names_.count(name) != 0; ++k) name = fmt::format("{}_{}", base, k);
    used_names_.insert(name);
    return name;
  }

  static DType TypeOf(const Value& v) { return v.qparams ? v.qparams->dtype() : v.dtype; }

  // The name and element type of a graph input or output, and its shape where octet knows it (inputs, with unknown
  // dims as dim_param "<name>_dim<d>"); OutputShapes fills in the outputs' shapes.
  Status AddValueInfo(ValueId id, onnx::ValueInfoProto* info) {
    const Value& v = graph_.value(id);
    info->set_name(v.name);
    OCTET_ASSIGN_OR_RETURN(int32_t elem, OnnxElemType(TypeOf(v)));
    if (elem == TensorProto::INT32 && !v.qparams) elem = TensorProto::INT64;
    auto* tensor_type = info->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(elem);
    if (v.shape) {
      auto* shape = tensor_type->mutable_shape();
      for (size_t d = 0; d < v.shape->dims().size(); ++d) {
        const int64_t dim = v.shape->dims()[d];
        if (dim == kUnknownDim) {
          shape->add_dim()->set_dim_param(fmt::format("{}_dim{}", v.name, d));
        } else {
          shape->add_dim()->set_dim_value(dim);
        }
      }
    }
    return OkStatus();
  }

  std::string AddInitializer(const std::string& base, const Tensor& t) {
    const std::string name = Fresh(base);
    const Status st = FillTensor(t, name, *proto_.add_initializer());
    OCTET_CHECK(st.ok());  // only f32, u8, s8 and s32 tensors come here
    return name;
  }

  // The ONNX name of a value; constants become initializers on first use.
  Result<std::string> Ref(ValueId id) {
    if (id == kNoValue) return std::string();
    const Value& v = graph_.value(id);
    if (v.kind == ValueKind::kConstant && emitted_constants_.insert(id).second) {
      OCTET_RETURN_IF_ERROR(FillTensor(v.data, v.name, *proto_.add_initializer(), /*int64=*/!v.qparams)
                                .WithContext(fmt::format("constant '{}'", v.name)));
    }
    return v.name;
  }

  onnx::NodeProto* AddNode(std::string_view op_type, const std::string& name, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs) {
    onnx::NodeProto* node = proto_.add_node();
    node->set_op_type(std::string(op_type));
    node->set_name(name);
    for (const std::string& in : inputs) node->add_input(in);
    for (const std::string& out : outputs) node->add_output(out);
    return node;
  }
  onnx::NodeProto* AddNode(FloatOp op, const std::string& name, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs) {
    return AddNode(FloatOpName(op), name, inputs, outputs);
  }

  // Scale and zero-point initializers of `q` (scalars per tensor, 1-D per channel); sets `axis` when per channel.
  std::pair<std::string, std::string> QParamsInitializers(const std::string& base, const QParams& q,
                                                          onnx::NodeProto* node) {
    const int64_t channels = q.per_channel() ? q.num_channels() : 1;
    const Shape shape = q.per_channel() ? Shape{channels} : Shape{};
    Tensor scale = Tensor::Create(DType::kF32, shape).value();
    Tensor zero_point = Tensor::Create(q.dtype(), shape).value();
    for (int64_t c = 0; c < channels; ++c) {
      scale.data<float>()[c] = q.scales()[static_cast<size_t>(c)];
      const int32_t zp = q.zero_points()[static_cast<size_t>(c)];
      switch (q.dtype()) {
        case DType::kU8: zero_point.data<uint8_t>()[c] = static_cast<uint8_t>(zp); break;
        case DType::kS8: zero_point.data<int8_t>()[c] = static_cast<int8_t>(zp); break;
        default: zero_point.data<int32_t>()[c] = zp; break;
      }
    }
    if (q.per_channel()) {
      AttributeProto* axis = node->add_attribute();
      axis->set_name("axis");
      axis->set_type(AttributeProto::INT);
      axis->set_i(q.axis());
    }
    return {AddInitializer(base + ".scale", scale), AddInitializer(base + ".zero_point", zero_point)};
  }

  // The qparams a value is written with: its own, or for an s8 activation the same codes shifted to u8
  // (ShiftS8ActivationsToU8).
  Result<const QParams*> QParamsOf(ValueId id) {
    const Value& v = graph_.value(id);
    if (!v.qparams) return InvalidArgument("value '{}' is used as an integer tensor but has no qparams", v.name);
    if (auto it = as_u8_.find(id); it != as_u8_.end()) return &it->second;
    return &*v.qparams;
  }

  // ONNX Runtime's x86 int8 kernels take u8 activations only: it rewrites an s8 QuantizeLinear -> DequantizeLinear
  // pair to u8 (zero point + 128) itself, but not one with a Reshape or Flatten in between, and a Conv or Gemm
  // reading such s8 codes then stays float. So every s8 activation goes out as u8 with zero point and range
  // shifted by 128: the same real values (q + 128 - (zp + 128) = q - zp), and shape operators carry the codes as
  // they are. Left s8: graph inputs and outputs (the interface), weights and other constants, the integer tensors
  // behind exposed outputs, and whatever a shape operator connects to one of those.
  void ShiftS8ActivationsToU8() {
    std::set<ValueId> keep;
    for (ValueId id : graph_.inputs()) keep.insert(id);
    for (ValueId id : graph_.outputs()) keep.insert(id);
    if (options_.expose_quantized_outputs) {
      const std::vector<int> producers = graph_.Producers();
      for (ValueId id : graph_.outputs()) {
        const int p = producers[static_cast<size_t>(id)];
        if (p >= 0 && IsInt8Op(graph_.node(p), Int8Op::kDequantize)) keep.insert(graph_.node(p).inputs[0]);
      }
    }
    auto shifts = [&](ValueId id) {
      if (id == kNoValue) return false;
      const Value& v = graph_.value(id);
      return v.kind == ValueKind::kNode && v.qparams && v.qparams->dtype() == DType::kS8 && !v.qparams->per_channel();
    };
    // Values joined by an ONNX (shape) operator share one dtype: keeping one keeps all of them. An ONNX operator
    // whose result depends on the codes' values (Pad's constant, ...) keeps its integer values s8 too.
    using F = FloatOp;
    static constexpr FloatOp kMovesCodes[] = {
        F::kReshape, F::kFlatten, F::kSqueeze,  F::kUnsqueeze, F::kTranspose, F::kConcat,       F::kSlice,
        F::kSplit,   F::kGather,  F::kIdentity, F::kExpand,    F::kTile,      F::kDepthToSpace, F::kSpaceToDepth};
    for (bool changed = true; changed;) {
      changed = false;
      for (const Node& node : graph_.nodes()) {
        if (!node.domain.empty() && node.domain != "ai.onnx") continue;
        std::vector<ValueId> ints;
        bool kept = std::none_of(std::begin(kMovesCodes), std::end(kMovesCodes),
                                 [&](FloatOp f) { return IsOpType(node.op_type, f); });
        for (const std::vector<ValueId>* list : {&node.inputs, &node.outputs}) {
          for (ValueId id : *list) {
            if (id == kNoValue || !graph_.value(id).qparams) continue;
            ints.push_back(id);
            kept = kept || keep.count(id) != 0 || (graph_.value(id).qparams->dtype() == DType::kS8 && !shifts(id));
          }
        }
        if (!kept) continue;
        for (ValueId id : ints) changed = keep.insert(id).second || changed;
      }
    }
    for (ValueId id = 0; id < static_cast<ValueId>(graph_.values().size()); ++id) {
      if (!shifts(id) || keep.count(id) != 0) continue;
      const QParams& q = *graph_.value(id).qparams;
      Result<QParams> u8 =
          QParams::PerTensor(DType::kU8, q.scale(), q.zero_point() + 128, q.quant_min() + 128, q.quant_max() + 128);
      OCTET_CHECK(u8.ok());  // an s8 range shifted by 128 is a u8 range
      as_u8_.emplace(id, *std::move(u8));
    }
  }

  // DequantizeLinear of an integer value, written once and shared by every consumer.
  Result<std::string> Dequantized(ValueId id) {
    if (auto it = dequantized_.find(id); it != dequantized_.end()) return it->second;
    OCTET_ASSIGN_OR_RETURN(const QParams* q, QParamsOf(id));
    OCTET_ASSIGN_OR_RETURN(std::string in, Ref(id));
    const std::string out = Fresh(in + ".dequantized");
    OCTET_RETURN_IF_ERROR(WriteDequantize(in, *q, out));
    dequantized_[id] = out;
    return out;
  }

  Status WriteDequantize(const std::string& in, const QParams& q, const std::string& out) {
    onnx::NodeProto* node = AddNode(FloatOp::kDequantizeLinear, Fresh(out + ".DequantizeLinear"), {}, {out});
    auto [scale, zero_point] = QParamsInitializers(in, q, node);
    node->add_input(in);
    node->add_input(scale);
    node->add_input(zero_point);
    return OkStatus();
  }

  // QuantizeLinear of the float tensor `in` into the integer value `out_id`, its codes then clipped to
  // [code_min, code_max] (by default the value's quant range) where that is narrower than the dtype.
  Status QuantizeTo(std::string in, ValueId out_id, std::optional<int64_t> code_min = std::nullopt,
                    std::optional<int64_t> code_max = std::nullopt) {
    OCTET_ASSIGN_OR_RETURN(const QParams* q, QParamsOf(out_id));
    return QuantizeToName(std::move(in), *q, graph_.value(out_id).name, code_min, code_max);
  }

  // QuantizeLinear of `in` with qparams `q` into the tensor named `out_name` (as QuantizeTo). ONNX's QuantizeLinear
  // saturates to the dtype only, so a narrower range (reduce_range's [0, 127], [-127, 127], a fused activation's
  // bounds) is a Clip on the integer codes after it: clamp(round(x / s) + zp, lo, hi) as octet computes it, and the
  // form in which ONNX Runtime still fuses the producer with this QuantizeLinear into one int8 kernel (a float Clip
  // between them would keep the producer float, and one before the QuantizeLinear is dropped only when it is wider
  // than the dtype's range).
  Status QuantizeToName(std::string in, const QParams& q, const std::string& out_name,
                        std::optional<int64_t> code_min = std::nullopt, std::optional<int64_t> code_max = std::nullopt,
                        bool in_range = false) {
    // in_range: the codes are known to lie in the quant range (no Clip for it).
    const int64_t lo =
        std::max<int64_t>(in_range ? DTypeMin(q.dtype()) : q.quant_min(), code_min.value_or(DTypeMin(q.dtype())));
    const int64_t hi =
        std::min<int64_t>(in_range ? DTypeMax(q.dtype()) : q.quant_max(), code_max.value_or(DTypeMax(q.dtype())));
    const bool narrow = !q.per_channel() && (lo > DTypeMin(q.dtype()) || hi < DTypeMax(q.dtype()));
    const std::string codes = narrow ? Fresh(out_name + ".unclipped") : out_name;
    onnx::NodeProto* node = AddNode(FloatOp::kQuantizeLinear, Fresh(out_name + ".QuantizeLinear"), {}, {codes});
    auto [scale, zero_point] = QParamsInitializers(out_name, q, node);
    node->add_input(in);
    node->add_input(scale);
    node->add_input(zero_point);
    if (narrow) ClipCodes(codes, q.dtype(), lo, std::max(lo, hi), out_name);
    return OkStatus();
  }

  // Clip on integer codes of `dtype` (opset 13's Clip takes u8 and s8 tensors) to [lo, hi].
  void ClipCodes(const std::string& in, DType dtype, int64_t lo, int64_t hi, const std::string& out) {
    AddNode(FloatOp::kClip, Fresh(out + ".Clip"),
            {in, AddInitializer(out + ".clip_min", ScalarCode(dtype, lo)),
             AddInitializer(out + ".clip_max", ScalarCode(dtype, hi))},
            {out});
  }

  static Tensor ScalarCode(DType dtype, int64_t v) {
    Tensor t = Tensor::Create(dtype, Shape{}).value();
    if (dtype == DType::kU8) t.data<uint8_t>()[0] = static_cast<uint8_t>(v);
    if (dtype == DType::kS8) t.data<int8_t>()[0] = static_cast<int8_t>(v);
    if (dtype == DType::kS32) t.data<int32_t>()[0] = static_cast<int32_t>(v);
    return t;
  }

  // The code QuantizeLinear gives the real value `x` with `q` (round half to even of x / s, as ONNX defines it),
  // saturated to the dtype. Relu and Clip commute with quantization (round is monotonic): quantizing
  // Clip(x, a, b) gives clamp(code(x), code(a), code(b)), and Relu(x) gives clamp(code(x), zp, ...).
  static int64_t Code(const QParams& q, float x) {
    const float r = std::nearbyint(x / q.scale());
    const double code = static_cast<double>(r) + q.zero_point();
    return static_cast<int64_t>(std::clamp<double>(code, DTypeMin(q.dtype()), DTypeMax(q.dtype())));
  }

  // Whether two per-tensor qparams map codes to the same real values over the same range.
  static bool SameCodes(const QParams& a, const QParams& b) {
    return !a.per_channel() && !b.per_channel() && a.dtype() == b.dtype() && a.scale() == b.scale() &&
           a.zero_point() == b.zero_point() && a.quant_min() == b.quant_min() && a.quant_max() == b.quant_max();
  }

  static int64_t DTypeMin(DType t) { return t == DType::kU8 ? 0 : t == DType::kS8 ? -128 : INT32_MIN; }
  static int64_t DTypeMax(DType t) { return t == DType::kU8 ? 255 : t == DType::kS8 ? 127 : INT32_MAX; }

  Status CopyAttributes(const Node& node, onnx::NodeProto* proto, const std::set<std::string>& drop = {}) {
    for (const auto& [name, a] : node.attributes.items()) {
      if (kOctetOnlyAttributes.count(name) != 0 || drop.count(name) != 0) continue;
      OCTET_RETURN_IF_ERROR(FillAttribute(name, a, *proto->add_attribute()));
    }
    return OkStatus();
  }

  // An input as a float tensor: dequantized when it is an integer value with qparams, as is otherwise (float bias).
  Result<std::string> FloatInput(ValueId id) {
    if (id == kNoValue) return std::string();
    if (graph_.value(id).qparams && TypeOf(graph_.value(id)) != DType::kF32) return Dequantized(id);
    return Ref(id);
  }

  // The ONNX names of a node's inputs (written before the node itself, as ONNX wants producers first): as they are,
  // or as float tensors (integer values dequantized).
  Result<std::vector<std::string>> Inputs(const Node& node, bool as_float) {
    std::vector<std::string> names;
    for (ValueId in : node.inputs) {
      OCTET_ASSIGN_OR_RETURN(std::string name, as_float ? FloatInput(in) : Ref(in));
      names.push_back(std::move(name));
    }
    return names;
  }

  std::vector<std::string> Outputs(const Node& node) const {
    std::vector<std::string> names;
    for (ValueId out : node.outputs) names.push_back(out == kNoValue ? "" : graph_.value(out).name);
    return names;
  }

  Result<std::string> ActivationString(const Node& node) {
    const Attribute* a = node.attributes.Find("activation");
    if (a == nullptr) return std::string();
    if (a->type() != AttrType::kString ||
        (!a->s().empty() && !IsOpType(a->s(), FloatOp::kRelu) && !IsOpType(a->s(), FloatOp::kClip))) {
      return Unimplemented("fused activation {} has no QDQ form", a->ToString());
    }
    return a->s();
  }

  Status WriteNode(const Node& node) {
    if (node.domain.empty() || node.domain == "ai.onnx") return WriteOnnxNode(node);
    const std::optional<Int8Op> op = FindInt8Op(node.domain, node.op_type);
    if (!op) {
      if (node.domain != kInt8Domain) return Unimplemented("operators of domain '{}' have no ONNX form", node.domain);
      if (node.attributes.Has("activation")) return WriteFused(node);
      return Unimplemented("no QDQ form for this operator");
    }
    const Int8OpInfo& info = Int8OpInfoOf(*op);
    switch (info.qdq) {
      case QdqPattern::kQuantizeLinear: {
        OCTET_ASSIGN_OR_RETURN(std::string in, Ref(node.inputs.at(0)));
        return QuantizeTo(in, node.outputs.at(0));
      }
      case QdqPattern::kDequantizeLinear: {
        OCTET_ASSIGN_OR_RETURN(const QParams* q, QParamsOf(node.inputs.at(0)));
        OCTET_ASSIGN_OR_RETURN(std::string in, Ref(node.inputs.at(0)));
        return WriteDequantize(in, *q, graph_.value(node.outputs.at(0)).name);
      }
      case QdqPattern::kRequantize: {
        OCTET_ASSIGN_OR_RETURN(std::string in, Dequantized(node.inputs.at(0)));
        return QuantizeTo(in, node.outputs.at(0));
      }
      case QdqPattern::kFloatOp: return WriteInt8(node, info.float_op);
      case QdqPattern::kClip:
      case QdqPattern::kLookup: return WriteElementwise(node, info.qdq);
      case QdqPattern::kDynamic: return WriteDynamic(node, info.float_op);
      case QdqPattern::kUnset: break;
    }
    return Unimplemented("no QDQ form for this operator");
  }

  // An ONNX operator: copied; integer inputs (shape operators on int8 values) are used as they are.
  Status WriteOnnxNode(const Node& node) {
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> inputs, Inputs(node, false));
    onnx::NodeProto* proto = AddNode(node.op_type, node.name, inputs, Outputs(node));
    std::set<std::string> drop;
    // Reshape's allowzero (opset 14) is unknown to opset 13, whose Reshape behaves as allowzero = 0.
    if (IsOpType(node.op_type, FloatOp::kReshape)) {
      OCTET_ASSIGN_OR_RETURN(const int64_t allowzero, node.attributes.GetInt("allowzero", 0));
      if (allowzero != 0) return Unimplemented("Reshape with allowzero = 1 has no opset-13 form");
      drop.insert("allowzero");
    }
    return CopyAttributes(node, proto, drop);
  }

  // A fused float operator (quant/fused_ops.h): the base operator, then Relu.
  Status WriteFused(const Node& node) {
    OCTET_ASSIGN_OR_RETURN(std::string activation, ActivationString(node));
    const std::string out = graph_.value(node.outputs.at(0)).name;
    const std::string pre = activation.empty() ? out : Fresh(out + ".pre_activation");
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> inputs, Inputs(node, false));
    onnx::NodeProto* proto = AddNode(node.op_type, node.name, inputs, {pre});
    OCTET_RETURN_IF_ERROR(CopyAttributes(node, proto));
    if (!activation.empty()) return AddActivation(node, activation, pre, out);
    return OkStatus();
  }

  // The fused activation as its ONNX node: Relu, or Clip with the real bounds as initializers.
  Status AddActivation(const Node& node, const std::string& activation, const std::string& in,
                       const std::string& out) {
    std::vector<std::string> inputs = {in};
    if (IsOpType(activation, FloatOp::kClip)) {
      const std::pair<const char*, const char*> bounds[] = {{"activation_min", ".clip_min"},
                                                            {"activation_max", ".clip_max"}};
      for (const auto& [attribute, suffix] : bounds) {
        std::string name;  // "": an omitted optional input
        if (node.attributes.Has(attribute)) {
          OCTET_ASSIGN_OR_RETURN(const float v, node.attributes.GetFloat(attribute));
          name = AddInitializer(node.name + suffix, ScalarF32(v));
        }
        inputs.push_back(std::move(name));
      }
      while (inputs.back().empty()) inputs.pop_back();
    }
    AddNode(activation, Fresh(node.name + "." + activation), inputs, {out});
    return OkStatus();
  }

  // QLayerNorm: LayerNormalization is opset 17, so at opset 13 it goes out written out over the last axis:
  // (x - mean) / Sqrt(var + epsilon) * Scale + B.
  Status WriteLayerNorm(const Node& node) {
    using F = FloatOp;
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> in, Inputs(node, true));
    OCTET_ASSIGN_OR_RETURN(const float epsilon, node.attributes.GetFloat("epsilon", 1e-5f));
    auto op = [&](FloatOp type, std::vector<std::string> inputs, bool last_axis_mean = false) -> Result<std::string> {
      const std::string type_name(FloatOpName(type));
      const std::string y = Fresh(node.name + "." + type_name);
      onnx::NodeProto* proto = AddNode(type, Fresh(node.name + "." + type_name), std::move(inputs), {y});
      if (last_axis_mean) {
        OCTET_RETURN_IF_ERROR(FillAttribute("axes", Attribute(std::vector<int64_t>{-1}), *proto->add_attribute()));
      }
      return y;
    };
    OCTET_ASSIGN_OR_RETURN(const std::string mean, op(F::kReduceMean, {in[0]}, true));
    OCTET_ASSIGN_OR_RETURN(const std::string d, op(F::kSub, {in[0], mean}));
    OCTET_ASSIGN_OR_RETURN(const std::string sq, op(F::kMul, {d, d}));
    OCTET_ASSIGN_OR_RETURN(const std::string var, op(F::kReduceMean, {sq}, true));
    OCTET_ASSIGN_OR_RETURN(const std::string var_eps,
                           op(F::kAdd, {var, AddInitializer(node.name + ".epsilon", ScalarF32(epsilon))}));
    OCTET_ASSIGN_OR_RETURN(const std::string sd, op(F::kSqrt, {var_eps}));
    OCTET_ASSIGN_OR_RETURN(const std::string n, op(F::kDiv, {d, sd}));
    const ValueId out = node.outputs.at(0);
    const std::string result = Fresh(graph_.value(out).name + ".float");
    if (in.size() > 2 && !in[2].empty()) {
      OCTET_ASSIGN_OR_RETURN(const std::string scaled, op(F::kMul, {n, in[1]}));
      AddNode(F::kAdd, node.name, {scaled, in[2]}, {result});
    } else {
      AddNode(F::kMul, node.name, {n, in[1]}, {result});
    }
    return QuantizeTo(result, out);
  }

  // An int8 operator: DequantizeLinear on its inputs, the float operator and QuantizeLinear: the QDQ group ONNX
  // Runtime fuses into one int8 kernel (QLinearConv, QGemm, ...). A fused Relu or Clip is no node of its own: it
  // bounds the output codes (QuantizeTo's integer Clip, none at all when the bound is the dtype's, as for a Relu
  // with zero point 0 on u8), which is exact since quantization commutes with it.
  Status WriteInt8(const Node& node, std::string_view float_op) {
    if (IsOpType(float_op, FloatOp::kLayerNormalization)) return WriteLayerNorm(node);
    OCTET_ASSIGN_OR_RETURN(std::string activation, ActivationString(node));
    const ValueId out = node.outputs.at(0);
    const std::string result = Fresh(graph_.value(out).name + ".float");
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> inputs, Inputs(node, true));
    onnx::NodeProto* proto = AddNode(float_op, node.name, inputs, {result});
    OCTET_RETURN_IF_ERROR(CopyAttributes(node, proto));
    OCTET_ASSIGN_OR_RETURN(const QParams* q, QParamsOf(out));
    std::optional<int64_t> code_min, code_max;
    if (IsOpType(activation, FloatOp::kRelu)) {
      code_min = Code(*q, 0.0f);
    } else if (IsOpType(activation, FloatOp::kClip)) {
      if (node.attributes.Has("activation_min")) {
        OCTET_ASSIGN_OR_RETURN(const float lo, node.attributes.GetFloat("activation_min"));
        code_min = Code(*q, lo);
      }
      if (node.attributes.Has("activation_max")) {
        OCTET_ASSIGN_OR_RETURN(const float hi, node.attributes.GetFloat("activation_max"));
        code_max = Code(*q, hi);
      }
    } else if (IsOpType(float_op, FloatOp::kMaxPool) && node.inputs.size() == 1) {
      // MaxPool selects input codes: with the input's own qparams they are in the quant range already, so its
      // QuantizeLinear needs no Clip (ONNX Runtime runs DequantizeLinear, MaxPool, QuantizeLinear as int8 MaxPool).
      OCTET_ASSIGN_OR_RETURN(const QParams* in_q, QParamsOf(node.inputs[0]));
      return QuantizeToName(result, *q, graph_.value(out).name, std::nullopt, std::nullopt,
                            /*in_range=*/SameCodes(*in_q, *q));
    }
    return QuantizeTo(result, out, code_min, code_max);
  }

  // QLookup: its function between DequantizeLinear and QuantizeLinear. QClamp: a Clip on the integer codes (exact,
  // see Code), on the input's codes when the qparams are the same, else after requantizing them.
  Status WriteElementwise(const Node& node, QdqPattern pattern) {
    using F = FloatOp;
    const ValueId out = node.outputs.at(0);
    if (pattern == QdqPattern::kClip) {
      OCTET_ASSIGN_OR_RETURN(float lo, node.attributes.GetFloat("min", -std::numeric_limits<float>::infinity()));
      OCTET_ASSIGN_OR_RETURN(float hi, node.attributes.GetFloat("max", std::numeric_limits<float>::infinity()));
      OCTET_ASSIGN_OR_RETURN(const QParams* in_q, QParamsOf(node.inputs.at(0)));
      OCTET_ASSIGN_OR_RETURN(const QParams* q, QParamsOf(out));
      std::optional<int64_t> code_min, code_max;
      if (!std::isinf(lo)) code_min = Code(*q, lo);
      if (!std::isinf(hi)) code_max = Code(*q, hi);
      if (SameCodes(*in_q, *q)) {
        OCTET_ASSIGN_OR_RETURN(std::string in, Ref(node.inputs.at(0)));
        const int64_t cmin = std::max<int64_t>(q->quant_min(), code_min.value_or(DTypeMin(q->dtype())));
        const int64_t cmax = std::min<int64_t>(q->quant_max(), code_max.value_or(DTypeMax(q->dtype())));
        ClipCodes(in, q->dtype(), cmin, std::max(cmin, cmax), graph_.value(out).name);
        return OkStatus();
      }
      OCTET_ASSIGN_OR_RETURN(std::string x, Dequantized(node.inputs.at(0)));
      return QuantizeTo(x, out, code_min, code_max);
    }
    OCTET_ASSIGN_OR_RETURN(std::string x, Dequantized(node.inputs.at(0)));
    const std::string result = Fresh(graph_.value(out).name + ".float");
    OCTET_ASSIGN_OR_RETURN(std::string function, node.attributes.GetString("function"));
    if (IsOpType(function, F::kHardSwish)) {
      const std::string gate = Fresh(node.name + ".hard_sigmoid");
      onnx::NodeProto* hs = AddNode(F::kHardSigmoid, Fresh(node.name + ".HardSigmoid"), {x}, {gate});
      OCTET_RETURN_IF_ERROR(FillAttribute("alpha", Attribute(1.0f / 6.0f), *hs->add_attribute()));
      OCTET_RETURN_IF_ERROR(FillAttribute("beta", Attribute(0.5f), *hs->add_attribute()));
      AddNode(F::kMul, node.name, {x, gate}, {result});
    } else if (IsOpType(function, F::kSigmoid) || IsOpType(function, F::kTanh) || IsOpType(function, F::kHardSigmoid) ||
               IsOpType(function, F::kLeakyRelu)) {
      onnx::NodeProto* proto = AddNode(function, node.name, {x}, {result});
      OCTET_RETURN_IF_ERROR(CopyAttributes(node, proto, {"function"}));
    } else if (IsOpType(function, F::kGelu)) {
      // Opset 13 has no Gelu (opset 20): 0.5 x (1 + erf(x / sqrt 2)), or the tanh form, written out.
      OCTET_ASSIGN_OR_RETURN(std::string approximate, node.attributes.GetString("approximate", "none"));
      auto constant = [&](const char* what, float v) { return AddInitializer(node.name + "." + what, ScalarF32(v)); };
      auto op = [&](FloatOp type, std::vector<std::string> in) {
        const std::string type_name(FloatOpName(type));
        const std::string y = Fresh(node.name + "." + type_name);
        AddNode(type, Fresh(node.name + "." + type_name), std::move(in), {y});
        return y;
      };
      std::string f;
      if (approximate == "tanh") {
        const std::string cube = op(F::kMul, {op(F::kMul, {x, x}), x});
        const std::string inner = op(F::kAdd, {x, op(F::kMul, {cube, constant("cubic", 0.044715f)})});
        f = op(F::kTanh, {op(F::kMul, {inner, constant("sqrt_2_over_pi", 0.79788456080286536f)})});
      } else {
        f = op(F::kErf, {op(F::kDiv, {x, constant("sqrt2", 1.41421356237309505f)})});
      }
      const std::string gate = op(F::kAdd, {f, constant("one", 1.0f)});
      AddNode(F::kMul, node.name, {op(F::kMul, {x, gate}), constant("half", 0.5f)}, {result});
    } else {
      return Unimplemented("lookup function '{}' has no ONNX form", function);
    }
    return QuantizeTo(result, out);
  }

  // A dynamic operator: its float operator on the dequantized weights; the activations stay float.
  Status WriteDynamic(const Node& node, std::string_view float_op) {
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> inputs, Inputs(node, true));
    onnx::NodeProto* proto = AddNode(float_op, node.name, inputs, Outputs(node));
    return CopyAttributes(node, proto);
  }

  const Graph& graph_;
  const QdqExportOptions& options_;
  onnx::GraphProto& proto_;
  std::set<std::string> used_names_;
  std::set<ValueId> emitted_constants_;
  std::map<ValueId, std::string> dequantized_;
  std::map<ValueId, QParams> as_u8_;  // s8 activations written as u8 (ShiftS8ActivationsToU8)
};

// Gives every graph output its shape (ONNX's checker requires one) by ONNX's own shape inference, which carries the
// inputs' dim_param names through to the outputs. The intermediate value infos it adds are dropped again: the
// export lists only what the graph's interface needs.
Status OutputShapes(onnx::ModelProto& model, const std::string& graph_name) {
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    return Internal("failed to export graph '{}' as ONNX QDQ: ONNX shape inference failed: {}", graph_name, e.what());
  }
  model.mutable_graph()->clear_value_info();
  for (onnx::ValueInfoProto& out : *model.mutable_graph()->mutable_output()) {
    if (!out.type().tensor_type().has_shape()) {
      return Internal("failed to export graph '{}' as ONNX QDQ: ONNX shape inference gives output '{}' no shape",
                      graph_name, out.name());
    }
    // A dim that inference could not tie to an input's gets a name of the output's ("logits_dim0") rather than
    // ONNX's generated "unk__0", or none at all.
    auto* dims = out.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
    for (int d = 0; d < dims->size(); ++d) {
      onnx::TensorShapeProto::Dimension& dim = (*dims)[d];
      if (dim.has_dim_value()) continue;
      if (!dim.has_dim_param() || dim.dim_param().rfind("unk__", 0) == 0) {
        dim.set_dim_param(fmt::format("{}_dim{}", out.name(), d));
      }
    }
  }
  return OkStatus();
}

}  // namespace

Result<std::string> ExportQdqModel(const Graph& graph, const QdqExportOptions& options) {
  // The writer has no form for If's branches or Loop's body; dropping them would change what the model computes.
  for (const Node& node : graph.nodes()) {
    if (!node.subgraphs.empty()) {
      return Unimplemented("failed to export graph '{}' as ONNX QDQ: node '{}' ({}) holds subgraphs, which the QDQ "
                           "export does not write yet (leave out --onnx)",
                           graph.name(), node.name, node.op_type);
    }
  }
  onnx::ModelProto model;
  const bool opset17 = NeedsOpset17(graph);
  model.set_ir_version(opset17 ? kLayerNormIrVersion : kQdqIrVersion);
  model.set_producer_name(options.producer_name);
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(opset17 ? kLayerNormOpset : kQdqOpset);
  QdqWriter writer(graph, options, *model.mutable_graph());
  if (Status st = writer.Write(); !st.ok()) {
    return st.WithContext(fmt::format("failed to export graph '{}' as ONNX QDQ", graph.name()));
  }
  if (options.dense_stems) WriteDenseStems(model);
  OCTET_RETURN_IF_ERROR(OutputShapes(model, graph.name()));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return Internal("failed to export graph '{}' as ONNX QDQ: the model does not serialize (over 2 GiB?)",
                    graph.name());
  }
  return bytes;
}

Status WriteQdqModel(const std::string& path, const Graph& graph, const QdqExportOptions& options) {
  OCTET_ASSIGN_OR_RETURN(std::string bytes, ExportQdqModel(graph, options));
  return WriteFileAtomically(path, bytes);
}

std::vector<std::string> NodesSaturatingWithoutVnni(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node& node : graph.nodes()) {
    const std::optional<Int8Op> op = FindInt8Op(node.domain, node.op_type);
    if (!op || Int8OpInfoOf(*op).convert != ConvertForm::kWeighted) continue;  // QConv, QGemm, QMatMul
    if (node.inputs.size() < 2 || node.inputs[0] == kNoValue || node.inputs[1] == kNoValue) continue;
    const std::optional<QParams>& x = graph.value(node.inputs[0]).qparams;
    const std::optional<QParams>& w = graph.value(node.inputs[1]).qparams;
    if (!x || !w || w->dtype() != DType::kS8) continue;
    // vpmaddubsw's pair sums a0*w0 + a1*w1 stay in int16: 7-bit activations, or weights in [-64, 63] (x86 preset).
    const int64_t a_max = x->dtype() == DType::kU8 ? x->quant_max() : x->quant_max() + 128;  // s8 goes out as u8
    const bool fits = 2 * a_max * std::max<int64_t>(0, w->quant_max()) <= 32767 &&
                      2 * a_max * std::max<int64_t>(0, -int64_t{w->quant_min()}) <= 32768;
    if (!fits) names.push_back(node.name);
  }
  return names;
}

}  // namespace octet
