// Graph -> ONNX QDQ ModelProto (see qdq_export.h for the mapping).
#include "io/onnx/qdq_export.h"

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

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "core/op_table.h"
#include "io/file_util.h"

namespace octet {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

constexpr int64_t kQdqOpset = 13;
constexpr int64_t kQdqIrVersion = 7;  // the IR version of opset 13

// octet's attributes that exist only for its own kernels (numerics and fused activations).
const std::set<std::string, std::less<>> kOctetOnlyAttributes = {"requantization", "activation", "activation_min",
                                                                  "activation_max", "reduce_range", "rounding",
                                                                  "non_finite"};

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

  Result<const QParams*> QParamsOf(ValueId id) {
    const Value& v = graph_.value(id);
    if (!v.qparams) return InvalidArgument("value '{}' is used as an integer tensor but has no qparams", v.name);
    return &*v.qparams;
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
    onnx::NodeProto* node = AddNode("DequantizeLinear", Fresh(out + ".DequantizeLinear"), {}, {out});
    auto [scale, zero_point] = QParamsInitializers(in, q, node);
    node->add_input(in);
    node->add_input(scale);
    node->add_input(zero_point);
    return OkStatus();
  }

  // QuantizeLinear of the float tensor `in` into the integer value `out_id`, after a Clip when the value's quant
  // range is narrower than its dtype (ONNX saturates to the dtype only).
  Status QuantizeTo(std::string in, ValueId out_id) {
    OCTET_ASSIGN_OR_RETURN(const QParams* q, QParamsOf(out_id));
    return QuantizeToName(std::move(in), *q, graph_.value(out_id).name);
  }

  // QuantizeLinear of `in` with qparams `qp` into the tensor named `out_name` (as QuantizeTo).
  Status QuantizeToName(std::string in, const QParams& q, const std::string& out_name) {
    const bool narrow = q.quant_min() > DTypeMin(q.dtype()) || q.quant_max() < DTypeMax(q.dtype());
    if (narrow && !q.per_channel()) {
      const float lo = q.scale() * static_cast<float>(q.quant_min() - q.zero_point());
      const float hi = q.scale() * static_cast<float>(q.quant_max() - q.zero_point());
      const std::string clipped = Fresh(out_name + ".clipped");
      AddNode("Clip", Fresh(out_name + ".Clip"),
              {in, AddInitializer(out_name + ".clip_min", ScalarF32(lo)),
               AddInitializer(out_name + ".clip_max", ScalarF32(hi))},
              {clipped});
      in = clipped;
    }
    onnx::NodeProto* node = AddNode("QuantizeLinear", Fresh(out_name + ".QuantizeLinear"), {}, {out_name});
    auto [scale, zero_point] = QParamsInitializers(out_name, q, node);
    node->add_input(in);
    node->add_input(scale);
    node->add_input(zero_point);
    return OkStatus();
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
    if (a->type() != AttrType::kString || (!a->s().empty() && a->s() != "Relu" && a->s() != "Clip")) {
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
    return CopyAttributes(node, proto);
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
    if (activation == "Clip") {
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
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> in, Inputs(node, true));
    OCTET_ASSIGN_OR_RETURN(const float epsilon, node.attributes.GetFloat("epsilon", 1e-5f));
    auto op = [&](const char* type, std::vector<std::string> inputs,
                  bool last_axis_mean = false) -> Result<std::string> {
      const std::string y = Fresh(node.name + "." + type);
      onnx::NodeProto* proto = AddNode(type, Fresh(node.name + "." + type), std::move(inputs), {y});
      if (last_axis_mean) {
        OCTET_RETURN_IF_ERROR(FillAttribute("axes", Attribute(std::vector<int64_t>{-1}), *proto->add_attribute()));
      }
      return y;
    };
    OCTET_ASSIGN_OR_RETURN(const std::string mean, op("ReduceMean", {in[0]}, true));
    OCTET_ASSIGN_OR_RETURN(const std::string d, op("Sub", {in[0], mean}));
    OCTET_ASSIGN_OR_RETURN(const std::string sq, op("Mul", {d, d}));
    OCTET_ASSIGN_OR_RETURN(const std::string var, op("ReduceMean", {sq}, true));
    OCTET_ASSIGN_OR_RETURN(const std::string var_eps,
                           op("Add", {var, AddInitializer(node.name + ".epsilon", ScalarF32(epsilon))}));
    OCTET_ASSIGN_OR_RETURN(const std::string sd, op("Sqrt", {var_eps}));
    OCTET_ASSIGN_OR_RETURN(const std::string n, op("Div", {d, sd}));
    const ValueId out = node.outputs.at(0);
    const std::string result = Fresh(graph_.value(out).name + ".float");
    if (in.size() > 2 && !in[2].empty()) {
      OCTET_ASSIGN_OR_RETURN(const std::string scaled, op("Mul", {n, in[1]}));
      AddNode("Add", node.name, {scaled, in[2]}, {result});
    } else {
      AddNode("Mul", node.name, {n, in[1]}, {result});
    }
    return QuantizeTo(result, out);
  }

  // An int8 operator: DequantizeLinear on its inputs, the float operator, the fused Relu, QuantizeLinear.
  Status WriteInt8(const Node& node, std::string_view float_op) {
    if (float_op == "LayerNormalization") return WriteLayerNorm(node);
    OCTET_ASSIGN_OR_RETURN(std::string activation, ActivationString(node));
    const ValueId out = node.outputs.at(0);
    const std::string result = Fresh(graph_.value(out).name + ".float");
    const std::string pre = activation.empty() ? result : Fresh(graph_.value(out).name + ".pre_activation");
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> inputs, Inputs(node, true));
    onnx::NodeProto* proto = AddNode(float_op, node.name, inputs, {pre});
    OCTET_RETURN_IF_ERROR(CopyAttributes(node, proto));
    if (activation == "Clip") {
      // A folded QClamp goes out as it came in: the operator quantized to the output's qparams, then
      // DequantizeLinear, Clip, QuantizeLinear (the same integers), which ONNX Runtime fuses into QLinearConv and a
      // clip on int8; a Clip between the operator and its QuantizeLinear would keep the operator float there.
      OCTET_ASSIGN_OR_RETURN(const QParams* q, QParamsOf(out));
      const std::string codes = Fresh(graph_.value(out).name + ".pre_clip");
      const std::string dequantized = Fresh(codes + ".dequantized");
      OCTET_RETURN_IF_ERROR(QuantizeToName(pre, *q, codes));
      OCTET_RETURN_IF_ERROR(WriteDequantize(codes, *q, dequantized));
      OCTET_RETURN_IF_ERROR(AddActivation(node, activation, dequantized, result));
    } else if (!activation.empty()) {
      OCTET_RETURN_IF_ERROR(AddActivation(node, activation, pre, result));
    }
    return QuantizeTo(result, out);
  }

  // QLookup (its function) and QClamp (Clip) between DequantizeLinear and QuantizeLinear.
  Status WriteElementwise(const Node& node, QdqPattern pattern) {
    OCTET_ASSIGN_OR_RETURN(std::string x, Dequantized(node.inputs.at(0)));
    const ValueId out = node.outputs.at(0);
    const std::string result = Fresh(graph_.value(out).name + ".float");
    if (pattern == QdqPattern::kClip) {
      OCTET_ASSIGN_OR_RETURN(float lo, node.attributes.GetFloat("min", -std::numeric_limits<float>::infinity()));
      OCTET_ASSIGN_OR_RETURN(float hi, node.attributes.GetFloat("max", std::numeric_limits<float>::infinity()));
      const std::string min_name = std::isinf(lo) ? "" : AddInitializer(node.name + ".min", ScalarF32(lo));
      const std::string max_name = std::isinf(hi) ? "" : AddInitializer(node.name + ".max", ScalarF32(hi));
      AddNode("Clip", node.name, {x, min_name, max_name}, {result});
      return QuantizeTo(result, out);
    }
    OCTET_ASSIGN_OR_RETURN(std::string function, node.attributes.GetString("function"));
    if (function == "HardSwish") {
      const std::string gate = Fresh(node.name + ".hard_sigmoid");
      onnx::NodeProto* hs = AddNode("HardSigmoid", Fresh(node.name + ".HardSigmoid"), {x}, {gate});
      OCTET_RETURN_IF_ERROR(FillAttribute("alpha", Attribute(1.0f / 6.0f), *hs->add_attribute()));
      OCTET_RETURN_IF_ERROR(FillAttribute("beta", Attribute(0.5f), *hs->add_attribute()));
      AddNode("Mul", node.name, {x, gate}, {result});
    } else if (function == "Sigmoid" || function == "Tanh" || function == "HardSigmoid" || function == "LeakyRelu") {
      onnx::NodeProto* proto = AddNode(function, node.name, {x}, {result});
      OCTET_RETURN_IF_ERROR(CopyAttributes(node, proto, {"function"}));
    } else if (function == "Gelu") {
      // Opset 13 has no Gelu (opset 20): 0.5 x (1 + erf(x / sqrt 2)), or the tanh form, written out.
      OCTET_ASSIGN_OR_RETURN(std::string approximate, node.attributes.GetString("approximate", "none"));
      auto constant = [&](const char* what, float v) { return AddInitializer(node.name + "." + what, ScalarF32(v)); };
      auto op = [&](const char* type, std::vector<std::string> in) {
        const std::string y = Fresh(node.name + "." + type);
        AddNode(type, Fresh(node.name + "." + type), std::move(in), {y});
        return y;
      };
      std::string f;
      if (approximate == "tanh") {
        const std::string cube = op("Mul", {op("Mul", {x, x}), x});
        const std::string inner = op("Add", {x, op("Mul", {cube, constant("cubic", 0.044715f)})});
        f = op("Tanh", {op("Mul", {inner, constant("sqrt_2_over_pi", 0.79788456080286536f)})});
      } else {
        f = op("Erf", {op("Div", {x, constant("sqrt2", 1.41421356237309505f)})});
      }
      const std::string gate = op("Add", {f, constant("one", 1.0f)});
      AddNode("Mul", node.name, {op("Mul", {x, gate}), constant("half", 0.5f)}, {result});
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
  onnx::ModelProto model;
  model.set_ir_version(kQdqIrVersion);
  model.set_producer_name(options.producer_name);
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kQdqOpset);
  QdqWriter writer(graph, options, *model.mutable_graph());
  if (Status st = writer.Write(); !st.ok()) {
    return st.WithContext(fmt::format("failed to export graph '{}' as ONNX QDQ", graph.name()));
  }
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
    const bool seven_bit = x->dtype() == DType::kU8 && x->quant_max() <= 127;
    if (!seven_bit) names.push_back(node.name);
  }
  return names;
}

}  // namespace octet
